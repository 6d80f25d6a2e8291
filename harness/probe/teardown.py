"""Ending a launch's processes off the critical path, and always before the work that launched them
returns (issue #16, item 4).

A capture is final once the server's last listing has been read: ending the process afterwards
(close stdin, grace, SIGTERM, SIGKILL, the launch's group and tracker reaped —
``process.terminate``) changes nothing in it but the attempt's exit code. Inside a :func:`scope`,
``launch_once`` therefore hands the teardown of a *good* capture to :func:`defer` and returns at
once; the teardown runs as a task beside whatever comes next (the other launch of the pair, the
record) and the scope awaits every teardown it holds when it ends — on success, on an exception and
on cancellation alike. A failed capture is still torn down before it is returned: its exit code and
stderr tail decide its status.

Scopes nest: ``measure`` opens one around its launches; a caller that opened one around several
measurements (a sweep) receives the inner scope's teardowns when the inner one ends, so they keep
running off that measurement's critical path too, and are awaited when the outer scope ends.
Without any scope, ``defer`` is never used and every launch ends its process before it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar

_PENDING: ContextVar[set[asyncio.Task] | None] = ContextVar("mcp_context_cost_teardowns", default=None)


def active() -> bool:
    """Whether a :func:`scope` is open in this context (a launch may then :func:`defer`)."""
    return _PENDING.get() is not None


def defer(end: Callable[[], Awaitable[object]]) -> None:
    """Run ``end()`` (a teardown) as a task owned by the innermost open :func:`scope`.
    Raises ``RuntimeError`` when no scope is open (the caller must then await ``end()`` itself)."""
    pending = _PENDING.get()
    if pending is None:
        raise RuntimeError("teardown.defer outside a teardown.scope")
    pending.add(asyncio.ensure_future(end()))


async def drain() -> None:
    """Await every teardown the innermost scope holds so far (before a launch that must not overlap
    an earlier one: a retry, a sequential confirmation). Never raises for a teardown's error."""
    pending = _PENDING.get()
    while pending:
        batch = list(pending)
        pending.difference_update(batch)
        await _finish(batch)


@contextlib.asynccontextmanager
async def scope() -> AsyncIterator[list[asyncio.Task]]:
    """Open a scope for deferred teardowns; see the module docstring. On exit its teardowns move to
    the enclosing scope, or, when there is none, are awaited before the block is left. Yields a list
    that holds, once the block has ended, every teardown deferred in it (for :func:`ended`)."""
    outer = _PENDING.get()
    pending: set[asyncio.Task] = set()
    deferred: list[asyncio.Task] = []
    token = _PENDING.set(pending)
    try:
        yield deferred
    finally:
        deferred.extend(pending)
        _PENDING.reset(token)
        if outer is not None:
            outer.update(pending)
        else:
            await _finish(list(pending))


async def _finish(tasks: list[asyncio.Task]) -> None:
    """Await ``tasks`` to their end. A cancellation of the waiter does not cancel them (``shield``):
    the waiter keeps waiting, so no process is left behind, then re-raises the cancellation."""
    if not tasks:
        return
    together = asyncio.gather(*tasks, return_exceptions=True)
    cancelled = None
    while not together.done():
        try:
            await asyncio.shield(together)
        except asyncio.CancelledError as exc:
            cancelled = exc
    if cancelled is not None:
        raise cancelled


async def ended(tasks) -> None:
    """Await the teardowns ``tasks`` (what a :func:`scope` yielded) to their end; see ``_finish``."""
    await _finish(list(tasks))
