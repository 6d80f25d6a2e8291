"""How many launches a sweep runs at once: each launch and package resolution holds a slot of one
``LaunchGate``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os


def default_slots() -> int:
    """4 launches per core, 2 to 16: a launch mostly waits on the network and the server."""
    return max(2, min(16, 4 * (os.cpu_count() or 1)))


def entries_in_flight(slots: int) -> int:
    return max(1, slots + slots // 2)


class LaunchGate:
    """At most ``slots`` launches at once; ``running`` and ``peak`` count them."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("a launch gate needs at least one slot")
        self.slots = slots
        self._free = asyncio.Semaphore(slots)
        self.running = 0
        self.peak = 0

    @contextlib.asynccontextmanager
    async def slot(self):
        async with self._free:
            self.running += 1
            self.peak = max(self.peak, self.running)
            try:
                yield
            finally:
                self.running -= 1

    def wrap(self, launcher):
        """``launcher`` taking a slot for each launch (its budget starts after the wait)."""
        async def gated(*args, **kwargs):
            async with self.slot():
                return await launcher(*args, **kwargs)

        return gated
