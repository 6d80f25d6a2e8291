"""Resources, resource templates and prompts listed after the tools, in their own budget. docs/METHODOLOGY.md,
"Resources and prompts (side figures)".
"""

from __future__ import annotations

import asyncio
import functools

from harness.core.side_figures import LISTS, METHOD, figure
from harness.probe import redact
from harness.probe.limits import Limits, TransportLimitExceeded
from harness.probe.outcome import Capture
# The session's request/reply primitive (``Conversation.request``): ids, lenient reply matching,
# server requests answered while waiting, an error reply turned into _Stop. Reused rather than
# re-implemented, so both listings read replies alike.
from harness.probe.session import _Stop, converse

SIDE_BUDGET_SECONDS = 15.0  # at most, for all three lists together
MARGIN_SECONDS = 2.0  # left before the launch's own deadline
MIN_SECONDS = 1.0  # below this the lists are not asked for at all


class _SideStop(Exception):

    def __init__(self, why: str, fatal: bool = False):
        super().__init__(why)
        self.fatal = fatal


def declared(capabilities: object) -> list[tuple[str, str, str]]:
    """``(record key, method, result field)`` of each list the server's capabilities declare."""
    caps = capabilities if isinstance(capabilities, dict) else {}
    return [(key, method, field) for key, method, field, cap in LISTS if cap in caps]


def after_tools_until(deadline: float):
    """An ``after_tools`` step collecting the side lists, ending ``MARGIN_SECONDS`` before ``deadline``."""
    async def step(talk, capture: Capture, limits: Limits) -> None:
        lists = declared(capture.capabilities)
        if not lists:
            return
        seconds = min(SIDE_BUDGET_SECONDS, deadline - asyncio.get_running_loop().time() - MARGIN_SECONDS)
        if seconds < MIN_SECONDS:
            capture.side_lists = {key: {"error": "not asked: no time left in the launch budget"} for key, _, _ in lists}
            return
        capture.side_lists = await collect(talk, limits, lists, seconds)
    return step


async def collect(talk, limits: Limits, lists: list, seconds: float) -> dict:
    """``{record key: {"items", "pages"} | {"error"}}`` for ``lists`` within ``seconds``; never raises for what
    the server does."""
    out: dict = {}
    try:
        async with asyncio.timeout(seconds):
            for key, method, field in lists:
                try:
                    out[key] = await _list(talk, limits, method, field)
                except _SideStop as stop:
                    out[key] = {"error": str(stop)[:300]}
                    if stop.fatal:
                        for rest, method_, _ in lists:
                            out.setdefault(rest, {"error": f"{method_}: not asked: the session had ended ({str(stop)[:120]})"})
                        break
    except TimeoutError:
        pass
    for key, method, _ in lists:
        out.setdefault(key, {"error": f"{method}: no answer within the side-list budget of {seconds:.0f} s"})
    return out


async def _list(talk, limits: Limits, method: str, field: str) -> dict:
    items: list = []
    seen: set[str] = set()
    cursor = None
    pages = 0
    while True:
        pages += 1
        if pages > limits.max_pages:
            raise _SideStop(f"{method}: more than {limits.max_pages} pages")
        result = await _ask(talk, method, {} if cursor is None else {"cursor": cursor})
        page = result.get(field)
        if not isinstance(page, list):
            raise _SideStop(f"{method}: result.{field} is {'missing' if field not in result else 'not an array'}")
        items.extend(page)
        cursor = result.get("nextCursor")
        if cursor is None:
            return {"items": items, "pages": pages}
        if not isinstance(cursor, str):
            raise _SideStop(f"{method}: nextCursor is not a string")
        if cursor in seen:
            raise _SideStop(f"{method}: nextCursor {redact.cut(cursor, 80)!r} repeated")
        seen.add(cursor)


async def _ask(talk, method: str, params: dict) -> dict:
    try:
        return await talk.request(method, params)
    except _Stop as stop:
        raise _SideStop(stop.failure.detail, fatal=stop.failure.kind == "exited") from None
    except ConnectionError:
        raise _SideStop("the server exited before replying", fatal=True) from None
    except TransportLimitExceeded as exc:
        raise _SideStop(str(exc), fatal=True) from None


def to_record(collected: dict, redactor) -> dict:
    """The record's ``sideLists`` object, each list's items redacted before counting."""
    out: dict = {"method": METHOD}
    for key, *_ in LISTS:
        entry = collected.get(key)
        if entry is None:
            continue
        if "error" in entry:
            out[key] = {"error": redactor.text(entry["error"])}
            continue
        items, _ = redactor.json(entry["items"])
        out[key] = figure(items) | {"pages": entry["pages"], "rawCapture": items}
    return out


def with_side_lists(launcher):
    """``launcher`` whose default conversation collects the side lists after the tools; a passed ``conversation``
    is kept."""
    async def launch(target, budget: float, limits: Limits, version: str, **kwargs):
        if "conversation" not in kwargs:
            deadline = asyncio.get_running_loop().time() + budget
            kwargs["conversation"] = functools.partial(converse, after_tools=after_tools_until(deadline))
        return await launcher(target, budget, limits, version, **kwargs)
    return launch
