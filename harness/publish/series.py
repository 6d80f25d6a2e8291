"""The comparable trend of one server: the run of sweeps ending at the newest one that were all
measured under the same isolation (methodology, "Trends over time — same conditions, or no line").

Rule. The series' isolation is that of the newest row whose isolation is on record. Walking back
from the newest row, rows under that isolation and rows whose isolation is not recorded are kept;
the first row recorded under another isolation ends the walk, and it and everything older are left
out. A not-recorded row is not evidence of a difference, so it never ends the series; it plots and
is marked. With no isolation on record at all, every row plots.

Shape: :class:`Series` — ``rows`` (oldest first, failures included: they are gaps, never zeros),
``isolation`` (``None`` when nothing is on record), ``starts`` (date of the first kept row),
``left_out`` (the older rows dropped, oldest first).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from harness.db.history import HistoryRow


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
    def unrecorded(self) -> int:
        """How many kept rows have no isolation on record."""
        return sum(1 for r in self.rows if r.isolation is None)


def comparable(rows: list[HistoryRow]) -> Series:
    """The comparable series of one server's ``rows`` (sorted by date, oldest first)."""
    current = next((r.isolation for r in reversed(rows) if r.isolation is not None), None)
    cut = 0
    for index in range(len(rows) - 1, -1, -1):
        isolation = rows[index].isolation
        if isolation is not None and isolation != current:
            cut = index + 1
            break
    return Series(tuple(rows[cut:]), current, tuple(rows[:cut]))
