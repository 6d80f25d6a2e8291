"""The comparable trend of one server: the run of sweeps ending at the newest one that were all
measured under the same isolation (methodology, "Trends over time — same conditions, or no line").

Rule. Only rows with a number decide it (issue #10): a failure contributes no point, so it can
neither set nor end a comparable run. The series' isolation is that of the newest *measured* row
whose isolation is on record. Walking back from the newest row, the first measured row recorded
under another isolation ends the walk, and it and everything older are left out; failures after
it are kept as gaps whatever their isolation, except those before the run's first point that were
recorded under another isolation (they end the older run, not begin this one). A not-recorded row is not evidence of a
difference, so it never ends the series; it plots and is marked. With no measured row's isolation
on record, every row plots.

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


NOT_MEASURED_HERE = "not-measured-here"


def not_measured_since(status: object, series: Series) -> tuple[str, int] | None:
    """``(first date, sweeps)`` of the unbroken run of ``not-measured-here`` history rows that ends
    with the newest row, when the published record's ``status`` is not that status itself (a record
    kept over that many sweeps the machine could not make); ``None`` otherwise."""
    if status == NOT_MEASURED_HERE:
        return None
    rows = sorted((*series.left_out, *series.rows), key=lambda h: h.date)
    streak = []
    for h in reversed(rows):
        if h.status != NOT_MEASURED_HERE:
            break
        streak.append(h.date)
    return (streak[-1], len(streak)) if streak else None
