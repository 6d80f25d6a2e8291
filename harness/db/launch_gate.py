"""How many launches a sweep runs at once (issue #16, item 2: "schedule launches so both cores
stay busy without oversubscribing").

A sweep's CPU goes into launches — a package manager resolving, a runtime starting, a server
answering — not into the harness. Counting *entries* in flight misjudges that: one entry is one
launch at a time when its confirmation follows its first launch, two when they run in parallel,
and a resolution (``harness.probe.resolve``) is a launch of its own. So the sweep counts
launches: every launch and every resolution takes a slot of one ``LaunchGate`` for as long as it
runs. Entries are admitted a little ahead of the slots (``entries_in_flight``), so a slot freed by
one server's teardown is taken by the next server's resolution at once.

Waiting for a slot happens before a launch is started and its budget (seconds) is passed in
already, so a launch never loses budget to the queue; the measurement's overall deadline still
counts wall time, and is generous enough for that (``measure``: four budgets plus 30 s).

Wiring: the sweep hands ``gate.wrap(launcher)`` to ``measure(…, launcher=…)``. A measure that
takes a launch limiter of its own (an ``async with limiter.slot()`` around each launch) can be
handed ``gate`` itself instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os


def default_slots() -> int:
    """Launches at once: 4 per core, 2 to 16 (a launch spends much of its time waiting on the
    network and on the server, so a core carries a few)."""
    return max(2, min(16, 4 * (os.cpu_count() or 1)))


def entries_in_flight(slots: int) -> int:
    """Entries admitted at once for ``slots`` launch slots: each may be between launches
    (classifying, counting, tearing down) while another takes its slot."""
    return max(1, slots + slots // 2)


class LaunchGate:
    """At most ``slots`` launches (or resolutions) at once. ``running`` and ``peak`` count them
    (for the bench and the tests)."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("a launch gate needs at least one slot")
        self.slots = slots
        self._free = asyncio.Semaphore(slots)
        self.running = 0
        self.peak = 0

    @contextlib.asynccontextmanager
    async def slot(self):
        """Hold one slot for the duration of the ``async with`` block."""
        async with self._free:
            self.running += 1
            self.peak = max(self.peak, self.running)
            try:
                yield
            finally:
                self.running -= 1

    def wrap(self, launcher):
        """``launcher`` (``measure``'s launcher signature) taking a slot for each launch."""
        async def gated(*args, **kwargs):
            async with self.slot():
                return await launcher(*args, **kwargs)

        return gated
