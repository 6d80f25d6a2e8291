"""The comparable trend of one server: :func:`comparable` gives a :class:`Series`.

Rule: docs/METHODOLOGY.md, "Trends over time".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from harness.db.history import HistoryRow
from harness.probe.status import NOT_MEASURED_HERE


@dataclass(frozen=True)
class Series:
    rows: tuple[HistoryRow, ...]
    isolation: str | None
    left_out: tuple[HistoryRow, ...]

    @property
    def starts(self) -> str | None:
        """Date of the first comparable row (``None`` for an empty series)."""
        return self.rows[0].date if self.rows else None

    @cached_property
    def points(self) -> tuple[HistoryRow, ...]:
        """Rows that carry a number (what a chart plots)."""
        return tuple(r for r in self.rows if r.tokens is not None)

    @cached_property
    def token_range(self) -> tuple[int, int] | None:
        """``(lowest, highest)`` tokens of the points (``None`` without points)."""
        tokens = [r.tokens for r in self.rows if r.tokens is not None]
        return (min(tokens), max(tokens)) if tokens else None

    @cached_property
    def unrecorded(self) -> int:
        """How many kept rows have no isolation on record."""
        return sum(1 for r in self.rows if r.isolation is None)


def comparable(rows: list[HistoryRow]) -> Series:
    """The comparable series of one server's ``rows`` (sorted by date, oldest first)."""
    current = next((r.isolation for r in reversed(rows) if r.isolation is not None and r.tokens is not None), None)
    cut = 0
    for index in range(len(rows) - 1, -1, -1):
        row = rows[index]
        if row.tokens is not None and row.isolation is not None and row.isolation != current:
            cut = index + 1
            break
    while current is not None and cut < len(rows) and rows[cut].tokens is None \
            and rows[cut].isolation not in (None, current):
        cut += 1
    return Series(tuple(rows[cut:]), current, tuple(rows[:cut]))




def not_measured_since(status: object, series: Series) -> tuple[str, int] | None:
    """``(first date, sweeps)`` of the trailing run of ``not-measured-here`` rows when the record's own
    status is another; ``None`` otherwise."""
    if status == NOT_MEASURED_HERE:
        return None
    rows = sorted((*series.left_out, *series.rows), key=lambda h: h.date)
    streak = []
    for h in reversed(rows):
        if h.status != NOT_MEASURED_HERE:
            break
        streak.append(h.date)
    return (streak[-1], len(streak)) if streak else None
