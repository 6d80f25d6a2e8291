"""Ending a launch's processes off the critical path: inside a ``scope``, a good capture's teardown is deferred
as a task, awaited when the scope ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar

_PENDING: ContextVar[set[asyncio.Task] | None] = ContextVar("mcp_context_cost_teardowns", default=None)


def active() -> bool:
    """Whether a :func:`scope` is open in this context."""
    return _PENDING.get() is not None


def defer(end: Callable[[], Awaitable[object]]) -> None:
    """Run ``end()`` as a task owned by the innermost open :func:`scope`; ``RuntimeError`` without one."""
    pending = _PENDING.get()
    if pending is None:
        raise RuntimeError("teardown.defer outside a teardown.scope")
    pending.add(asyncio.ensure_future(end()))


async def drain() -> None:
    """Await every teardown the innermost scope holds so far. Never raises for a teardown's error."""
    pending = _PENDING.get()
    while pending:
        batch = list(pending)
        pending.difference_update(batch)
        await _finish(batch)


@contextlib.asynccontextmanager
async def scope() -> AsyncIterator[list[asyncio.Task]]:
    """A scope for deferred teardowns; yields the list of those deferred in it."""
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
    """Await the teardowns a :func:`scope` yielded."""
    await _finish(list(tasks))
