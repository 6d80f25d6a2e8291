"""Handing a config's env values to a server through the probe's own mechanism, concurrently.

The probe reads a declared name's value from the process environment when it builds the child's
environment (``harness.probe.environment.child_env``), and a header's value from
``MCP_HEADER_<NAME>`` (``harness.probe.remote``); that is the path the probe's redaction and its
hardening cover, so the audit uses it rather than a side door. A *lease* sets those variables
for the length of one measurement and restores them after. Two measurements whose leases disagree
about a name (different values, or one needs it unset) never overlap; a lease that touches a
variable the probe passes to *every* child (``PATH``, proxy and index settings) runs alone.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import asynccontextmanager

from harness.probe.environment import BASE_NAMES, NETWORK_NAMES, NETWORK_PREFIXES

_SHARED = set(BASE_NAMES) | set(NETWORK_NAMES)


def shared_with_every_child(name: str) -> bool:
    """Whether the probe passes ``name`` from the host to every server it launches."""
    return name in _SHARED or name.startswith(NETWORK_PREFIXES)


class EnvLease:
    """Grants leases over ``os.environ``. ``assignments`` map a name to a value, or to ``None``
    for "must be unset" (a name the config declares whose value is not in hand: the probe then
    gives its placeholder instead of a host value the config never asked for)."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[str | None, int]] = {}
        self._saved: dict[str, str | None] = {}
        self._exclusive = False
        self._active = 0
        self._changed = asyncio.Condition()

    def _fits(self, assignments: dict[str, str | None], exclusive: bool) -> bool:
        if self._exclusive or (exclusive and self._active):
            return False
        return all(name not in self._held or self._held[name][0] == value for name, value in assignments.items())

    @asynccontextmanager
    async def hold(self, assignments: dict[str, str | None]):
        """Set ``assignments`` for the body; waits while a conflicting lease is held."""
        exclusive = any(shared_with_every_child(name) for name in assignments)
        async with self._changed:
            await self._changed.wait_for(lambda: self._fits(assignments, exclusive))
            self._take(assignments, exclusive)
        try:
            yield
        finally:
            async with self._changed:
                self._give_back(assignments, exclusive)
                self._changed.notify_all()

    def _take(self, assignments: dict[str, str | None], exclusive: bool) -> None:
        self._active += 1
        self._exclusive = exclusive
        for name, value in assignments.items():
            held = self._held.get(name)
            if held is None:
                self._saved[name] = os.environ.get(name)
                _put(name, value)
                self._held[name] = (value, 1)
            else:
                self._held[name] = (value, held[1] + 1)

    def _give_back(self, assignments: dict[str, str | None], exclusive: bool) -> None:
        self._active -= 1
        if exclusive:
            self._exclusive = False
        for name in assignments:
            value, count = self._held[name]
            if count > 1:
                self._held[name] = (value, count - 1)
                continue
            del self._held[name]
            _put(name, self._saved.pop(name))


def _put(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
