"""The MCP conversation, independent of the transport: initialize, initialized, every ``tools/list`` page, the
settle window. docs/METHODOLOGY.md, "Talking MCP the way clients do".
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Protocol

from harness import __version__
from harness.core.canonical import stringify
from harness.probe import compatibility, redact, replies
from harness.probe.limits import Limits, MalformedReply, TransportLimitExceeded
from harness.probe.outcome import Capture, Failure

REQUESTED_PROTOCOL_VERSION = "2025-11-25"
MODERN_PROTOCOL_VERSION = "2026-07-28"
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_INFO = {"name": "mcp-context-cost", "version": __version__}
# One wording whichever side noticed first (a failed write to stdin or EOF on stdout), so the
# same behaviour always yields the same note.
EXITED = "the server exited before replying"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
LIST_CHANGED = "notifications/tools/list_changed"
METHOD_NOT_FOUND = -32601

# The settle window, in seconds. After each complete listing of a server that
# declares tools.listChanged, the client waits for notifications/tools/list_changed and lists again
# when one arrives (or arrived during the listing). A listing of zero tools gets the longer wait
# before zero is believed; the whole settling never takes more than SETTLE_MAX_SECONDS or
# MAX_RELISTS extra listings, and never outlives the launch's deadline.
# After a listing *with* tools the quiet window is short: the TypeScript SDK's
# McpServer declares listChanged on every server, nearly all of which register their tools before
# they connect and never notify, so a long window was pure waiting on every launch. A server that
# registers more tools as part of answering (right after the reply, or on the same startup burst)
# notifies within milliseconds; 0.25 s leaves a loaded machine a wide margin for that. A server
# whose tools wait on later I/O was never caught reliably by any fixed window: its two launches
# then differ (``dynamic``), or agree on the first list.
SETTLE_QUIET_SECONDS = 0.25
SETTLE_EMPTY_SECONDS = 5.0
# A window whose end came this much late while this process was held up (not reading) stays open this much longer,
# up to SETTLE_HELD_UP_MAX past its end.
SETTLE_HELD_UP_SLICE = 0.05
SETTLE_HELD_UP_MAX = 5.0
SETTLE_MAX_SECONDS = 15.0
MAX_RELISTS = 10


class Transport(Protocol):
    """What the conversation needs of a transport."""

    async def send(self, message: dict) -> str | None: ...
    async def receive(self): ...
    def note_noise(self, text: str) -> None: ...


class _Stop(Exception):
    def __init__(self, failure: Failure):
        self.failure = failure


async def converse(transport: Transport, capture: Capture, limits: Limits, *,
                   capabilities: dict | None = None, after_tools=None) -> None:
    """Run initialize → initialized → tools/list pages (→ settle), filling ``capture``; never raises for what the
    server does. ``after_tools`` must not touch ``capture.tools`` or ``capture.failure``."""
    talk = Conversation(transport, capture, limits)
    capture.transport = capture.transport or getattr(transport, "name", None)

    async def steps() -> None:
        await talk.initialize(capabilities)
        await talk.initialized()
        listen = getattr(transport, "listen", None)
        if listen is not None and declares_list_changed(capture.capabilities):
            await listen()  # Streamable HTTP: open the stream that carries unrelated notifications
        await talk.list_settled()
        if after_tools is not None:
            await after_tools(talk, capture, limits)

    await _guarded(talk, steps())


async def discover(transport: Transport, capture: Capture, limits: Limits) -> None:
    """The 2026-07-28 flow (``server/discover``, then ``tools/list`` pages), used only after a refused
    ``initialize``, for a separate figure."""
    meta = {META_VERSION: capture.requested_version, META_CLIENT_INFO: CLIENT_INFO, META_CLIENT_CAPABILITIES: {}}
    talk = Conversation(transport, capture, limits, meta)
    capture.transport = capture.transport or getattr(transport, "name", None)

    async def steps() -> None:
        capture.phase = "server/discover"
        _adopt_discover(await talk.request("server/discover", {"_meta": meta}), capture, meta)
        await talk.list_settled()

    await _guarded(talk, steps())


async def run_within(conversation, transport: Transport, capture: Capture, limits: Limits, budget: float) -> None:
    """Run ``conversation`` under one deadline; a complete listing in hand survives it."""
    try:
        async with asyncio.timeout(budget):
            await conversation(transport, capture, limits)
    except TimeoutError:
        if capture.tools is not None and capture.failure is None:
            capture.notes.append(f"the launch's deadline ({budget:g} s) ended the settle window; the last "
                                 "complete listing is published")
            capture.phase = "done"
        elif (near := getattr(transport, "near_miss", None)) is not None:
            # something arrived and is unusable: that is the finding, not the clock
            capture.failure = Failure("malformed", capture.phase, f"no usable reply within {budget:g} s; a message "
                                      f"shaped like a reply arrived without \"jsonrpc\": \"2.0\" (every SDK skips it): "
                                      f"{redact.cut(near, 120)!r}")
        else:
            capture.failure = Failure("timeout", capture.phase, f"no answer within {budget:g} s")
    except MalformedReply as exc:
        capture.failure = Failure("malformed", capture.phase, str(exc))
    except TransportLimitExceeded as exc:
        capture.failure = Failure("limit", capture.phase, str(exc))


def declares_list_changed(capabilities: object) -> bool:
    """True when a result's ``capabilities`` declare ``tools.listChanged: true``."""
    tools = capabilities.get("tools") if isinstance(capabilities, dict) else None
    return isinstance(tools, dict) and tools.get("listChanged") is True


def initialize_request(version: str, request_id: int = 1, capabilities: dict | None = None) -> dict:
    """The ``initialize`` request this harness sends."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": dict(capabilities or {}), "clientInfo": CLIENT_INFO},
    }


async def _guarded(talk: "Conversation", steps) -> None:
    capture = talk.capture
    try:
        await steps
        capture.phase = "done"
    except _Stop as stop:
        capture.failure = stop.failure
    except ConnectionError:
        await _drain(talk.transport)
        capture.failure = Failure("exited", capture.phase, EXITED)
    finally:
        talk.finish()
        for finding in getattr(talk.transport, "leniencies", ()):
            _tolerated(capture, finding)


def _tolerated(capture: Capture, finding: compatibility.Finding) -> None:
    if finding.what not in capture.notes:
        capture.notes.append(finding.what)
    compatibility.add(capture, finding)


async def _drain(transport: Transport, seconds: float = 2.0) -> None:
    """After a write found the server gone, read what it printed (noise counts the same either way)."""
    try:
        async with asyncio.timeout(seconds):
            while await transport.receive() is not None:
                pass
    except (TimeoutError, Exception):  # noqa: BLE001 - a limit or parse error here changes nothing
        pass


class _Window:
    """Ends ``timeout`` (an entered ``asyncio.timeout(None)``) ``seconds`` from now, or later when this process was
    held up across that moment (another thread's GIL-holding load, a starved CPU): its timer then fires late, with
    what the server sent meanwhile still unread, and the window is kept open one more ``SETTLE_HELD_UP_SLICE`` for it
    (again while held up; until at most ``SETTLE_HELD_UP_MAX`` past its end, and never past ``latest``)."""

    def __init__(self, timeout: asyncio.Timeout, seconds: float, latest: float):
        self._loop, self._timeout = asyncio.get_running_loop(), timeout
        self._latest = min(self._loop.time() + seconds + SETTLE_HELD_UP_MAX, latest)
        self._arm(self._loop.time() + seconds)

    def _arm(self, when: float) -> None:
        self._when, self._cpu = when, time.thread_time()
        self._handle = self._loop.call_at(when, self._fire)

    def _fire(self) -> None:
        now = self._loop.time()
        # Lateness this thread spent on the CPU (reading what the server sent) is not being held up: a server
        # must not stretch the window by sending what takes long to read.
        held_up = now - self._when - (time.thread_time() - self._cpu)
        if held_up > SETTLE_HELD_UP_SLICE and now < self._latest:
            self._arm(min(now + SETTLE_HELD_UP_SLICE, self._latest))
        else:
            self._timeout.reschedule(now)  # a deadline already past: the timeout ends the window at once

    def cancel(self) -> None:
        self._handle.cancel()


class Conversation:
    """One client side of the conversation: request ids, replies, server requests, list_changed count."""

    def __init__(self, transport: Transport, capture: Capture, limits: Limits, meta: dict | None = None):
        self.transport, self.capture, self.limits, self.meta = transport, capture, limits, meta
        self.next_id = 1
        self.list_changed = 0
        self.deaf = False  # nothing more could arrive while waiting for list_changed
        self.unknown_ids: list[object] = []  # ids of replies that answered no request of ours
        self._string_ids = False

    async def request(self, method: str, params: dict) -> dict:
        """Send one request and return its ``result``; raises ``_Stop`` for anything else."""
        request_id, self.next_id = self.next_id, self.next_id + 1
        await self.transport.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self._result(request_id)

    async def initialize(self, capabilities: dict | None = None) -> None:
        capture = self.capture
        capture.phase = "initialize"
        params = initialize_request(capture.requested_version, capabilities=capabilities)["params"]
        result = await self.request("initialize", params)
        capture.initialized = True
        capture.results.append(("initialize", None, result))
        info = result.get("serverInfo")
        if isinstance(info, dict):
            capture.server_name = replies.text_or_none(info.get("name"))
            capture.server_version = replies.text_or_none(info.get("version"))
        version = result.get("protocolVersion")
        capture.negotiated_version = version if isinstance(version, str) else None
        capture.instructions = replies.text_or_none(result.get("instructions"))
        caps = result.get("capabilities")
        capture.capabilities = caps if isinstance(caps, dict) else None
        capture.declared_tools_capability = isinstance(caps, dict) and "tools" in caps

    async def initialized(self) -> None:
        """Send ``notifications/initialized``; a refusal is recorded and, as in the Python SDK, the listing goes
        on."""
        self.capture.phase = "notifications/initialized"
        refusal = await self.transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if refusal is not None:
            _tolerated(self.capture, compatibility.Finding(
                f"the server refused notifications/initialized ({refusal}); this harness went on to tools/list "
                "as the Python SDK does", (compatibility.TYPESCRIPT,)))

    async def list_settled(self) -> None:
        """List every page, relisting while ``list_changed`` arrives within the settle window."""
        capture, loop = self.capture, asyncio.get_running_loop()
        before = self.list_changed
        self._adopt(await self.list_all(1))
        if not declares_list_changed(capture.capabilities):
            return
        first, started, listings = len(capture.tools or ()), loop.time(), 1
        settled = started  # when the last listing completed
        while True:
            if self.list_changed == before:  # nothing arrived during the listing: wait for it
                window = min(SETTLE_QUIET_SECONDS if capture.tools else SETTLE_EMPTY_SECONDS,
                             SETTLE_MAX_SECONDS - (loop.time() - started))
                if window <= 0 or not await self._wait_list_changed(window, started + SETTLE_MAX_SECONDS):
                    break
            if listings - 1 >= MAX_RELISTS or loop.time() - started >= SETTLE_MAX_SECONDS:
                capture.notes.append(f"{LIST_CHANGED} kept arriving: listed {listings} times in "
                                     f"{math.ceil(loop.time() - started)} s; the last complete listing is published")
                return
            before, listings = self.list_changed, listings + 1
            try:
                self._adopt(await self.list_all(listings))
                settled = loop.time()
            except (_Stop, ConnectionError) as exc:
                detail = exc.failure.detail if isinstance(exc, _Stop) else EXITED
                capture.notes.append(f"listing {listings} after {LIST_CHANGED} failed ({detail}); the previous "
                                     "complete listing is published")
                return
        self._note_settled(first, listings, settled - started)

    def _adopt(self, listing: tuple[list, int]) -> None:
        self.capture.tools, self.capture.pages = listing

    def _note_settled(self, first: int, listings: int, seconds: float) -> None:
        capture = self.capture
        if listings > 1:
            capture.notes.append(
                f"declared tools.listChanged and sent {LIST_CHANGED}: listed {listings} times; the list settled "
                f"within {max(1, math.ceil(seconds))} s of the first listing ({first} → {len(capture.tools or ())} tools), "
                "and the settled list is published")
        elif not capture.tools and self.deaf:
            capture.notes.append(f"declared tools.listChanged and listed zero tools; nothing could carry {LIST_CHANGED} "
                                 "any more (the server closed its output, or offers no stream for notifications), so "
                                 "zero is published")
        elif not capture.tools:
            capture.notes.append(f"declared tools.listChanged and listed zero tools; no {LIST_CHANGED} came within "
                                 f"{SETTLE_EMPTY_SECONDS:g} s, so zero is published")

    async def _wait_list_changed(self, seconds: float, latest: float) -> bool:
        """Whether ``list_changed`` arrived within ``seconds`` (:class:`_Window`: longer if this process was held up
        at the end, never past the loop time ``latest``)."""
        self.capture.phase = "tools/list settle"
        seen = self.list_changed
        try:
            async with asyncio.timeout(None) as timeout:
                window = _Window(timeout, seconds, latest)
                try:
                    while self.list_changed == seen:
                        incoming = await self.transport.receive()
                        if incoming is None:
                            self.deaf = True
                            return False
                        if "method" in incoming.message:
                            await self._on_server_message(incoming.message)
                        else:
                            self._unknown(incoming)
                finally:
                    window.cancel()
        except TimeoutError:
            return False
        except ConnectionError:  # the server went away while we answered its request
            self.deaf = True
            return False
        return True

    async def list_all(self, listing: int) -> tuple[list, int]:
        """One complete ``tools/list`` as ``(tools, pages)``; only an absent or null ``nextCursor`` ends it."""
        capture = self.capture
        tools: list = []
        seen: dict[str, int] = {}  # cursor → the page that first carried it
        pages: list[str] = []  # each page's tools, canonical, to say whether a repeat is a loop
        cursor = None
        while True:
            page = len(pages) + 1
            capture.phase = f"tools/list page {page}" + (f" (listing {listing})" if listing > 1 else "")
            if page > self.limits.max_pages:
                raise _Stop(Failure("limit", capture.phase, f"more than {self.limits.max_pages} tools/list pages"))
            result = await self._list_page(cursor, page)
            if result is None:
                return [], 1
            if listing == 1:
                capture.results.append(("tools/list", page, result))
            page_tools = result.get("tools")
            if not isinstance(page_tools, list):
                shape = "missing" if "tools" not in result else f"{replies.js_type(page_tools)}, not an array"
                raise _Stop(Failure("bad-reply", capture.phase, f"tools/list result.tools is {shape}"))
            tools.extend(page_tools)
            pages.append(stringify(page_tools))
            if listing == 1:
                capture.pages = page
            cursor = result.get("nextCursor")
            if cursor is None:
                if "nextCursor" in result and listing == 1:
                    capture.notes.append(f"page {page} of tools/list carried \"nextCursor\": null; read as the end "
                                         "of the list (the schema allows only a string or no member)")
                return tools, page
            if not isinstance(cursor, str):
                raise _Stop(Failure("bad-reply", capture.phase, f"nextCursor is {replies.js_type(cursor)}, not a string"))
            if cursor in seen:
                if pages[-1] == pages[seen[cursor] - 1]:
                    # the page repeats the one that first carried this cursor: every tool is in hand
                    del tools[len(tools) - len(page_tools):]
                    if listing == 1:
                        capture.pages = page - 1
                        capture.notes.append(
                            f"nextCursor {redact.cut(cursor, 80)!r} repeated: page {page} repeated page {seen[cursor]} "
                            "(the same tools and the same cursor); the listing was ended there, the repeated page "
                            "not counted, and no tool was lost")
                    return tools, page - 1
                again = "other tools than"
                raise _Stop(Failure("pagination", capture.phase,
                                    f"nextCursor {redact.cut(cursor, 80)!r} repeated: page {page} carried it again, with {again} "
                                    f"page {seen[cursor]}; stopped instead of following it in a loop"))
            seen[cursor] = page
            if cursor == "" and listing == 1:
                capture.notes.append(f'page {page} of tools/list carried nextCursor "" — an empty string is a cursor '
                                     "(only an absent or null nextCursor ends the list), so it was followed")

    async def _list_page(self, cursor: str | None, page: int) -> dict | None:
        """One page's result; ``None`` for -32601 on the first page from a server without tools."""
        params: dict[str, object] = {"cursor": cursor} if cursor is not None else {}
        if self.meta:
            params["_meta"] = self.meta
        try:
            return await self.request("tools/list", params)
        except _Stop as stop:
            failure = stop.failure
            if page > 1 or self.capture.declared_tools_capability or failure.code != METHOD_NOT_FOUND:
                raise
            self.capture.zero_tools_reason = (
                "zero tools: the server declares no tools capability at initialize "
                f"(capabilities: {_keys(self.capture.capabilities)}) and answered tools/list with JSON-RPC error "
                f"{failure.code} ({failure.message!r}); measured as zero tools, as a client lists none from it")
            return None

    async def _result(self, request_id: int) -> dict:
        while True:
            incoming = await self.transport.receive()
            if incoming is None:
                raise _Stop(Failure("exited", self.capture.phase, EXITED))
            message = incoming.message
            if "method" in message:
                await self._on_server_message(message)
                continue
            match = replies.answers(message.get("id"), request_id)
            if match is None:
                self._unknown(incoming)
                continue
            if match == replies.STRING and not self._string_ids:
                self._string_ids = True
                self.capture.notes.append(
                    f"the server echoed request id {request_id} as {redact.cut(stringify(message.get('id')), 40)} (a string, "
                    "where JSON-RPC asks for the id unchanged); matched as the official SDKs match it")
            if "error" in message:
                raise _Stop(replies.error_failure(self.capture.phase, message["error"]))
            result = message.get("result")
            if not isinstance(result, dict):
                raise _Stop(Failure("bad-reply", self.capture.phase,
                                    f"result is {replies.js_type(result)}, not an object"))
            return result

    def _unknown(self, incoming) -> None:
        self.unknown_ids.append(incoming.message.get("id"))
        self.transport.note_noise(incoming.raw)

    def finish(self) -> None:
        """Add the notes only the whole conversation can write."""
        if self.unknown_ids:
            first = stringify(self.unknown_ids[0]) if self.unknown_ids[0] is not None else "null"
            self.capture.notes.append(f"{len(self.unknown_ids)} repl(ies) answering no request of this client were "
                                      f"skipped and counted as noise (first: id {redact.cut(first, 40)})")

    async def _on_server_message(self, message: dict) -> None:
        if "id" not in message:
            if message.get("method") == LIST_CHANGED:
                self.list_changed += 1
            return  # a notification: nothing to answer
        method = message.get("method")
        self.capture.server_requests.append(redact.cut(str(method), 80))
        if method == "ping":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: this client declared no capabilities ({method})"}
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        await self.transport.send(reply)


def _adopt_discover(result: dict, capture: Capture, meta: dict) -> None:
    supported = result.get("supportedVersions")
    capture.capabilities = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else None
    capture.declared_tools_capability = bool(capture.capabilities and "tools" in capture.capabilities)
    capture.instructions = replies.text_or_none(result.get("instructions"))
    info = (result.get("_meta") or {}).get(META_SERVER_INFO) if isinstance(result.get("_meta"), dict) else None
    if isinstance(info, dict):
        capture.server_name = replies.text_or_none(info.get("name"))
        capture.server_version = replies.text_or_none(info.get("version"))
    if isinstance(supported, list) and supported and capture.requested_version not in supported:
        meta[META_VERSION] = capture.requested_version = str(supported[-1])
    capture.negotiated_version = meta[META_VERSION]
    capture.extra_supported = supported if isinstance(supported, list) else None


def _keys(capabilities: dict | None) -> str:
    names = [redact.cut(str(k), 40) for k in capabilities] if isinstance(capabilities, dict) else []
    return ", ".join(names[:8]) if names else "none"
