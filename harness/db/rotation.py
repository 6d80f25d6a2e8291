"""Weekly rotation: the slice of the catalog a sweep re-measures in a given week (``slice_for``),
and the cycle that fits a sweep's capacity (``weeks_to_cover``). docs/OPERATIONS.md, "Rotation"."""
from __future__ import annotations

import datetime as _dt
import hashlib
import math

from harness.db.catalog import Catalog, Entry

EPOCH_MONDAY = _dt.date(1969, 12, 29)  # the Monday of ISO week 1970-W01
# Never changed: a new salt would reassign every entry at once (chosen as the first to split the
# catalog of 2026-11-30 evenly for a 3-week cycle).
SALT = "mcp-context-cost/rotation/v1/s86"
MAX_CYCLE_WEEKS = 52  # as servers.yaml's cycleWeeks allows


def slot_of(name: str, cycle_weeks: int) -> int:
    """The slot in ``0..cycle_weeks-1`` of ``name`` (rendezvous hashing). ``ValueError`` if ``cycle_weeks < 1``."""
    if cycle_weeks < 1:
        raise ValueError(f"cycle_weeks must be >= 1, got {cycle_weeks}")

    def weight(slot: int) -> int:
        digest = hashlib.sha256(f"{SALT}\x00{name}\x00{slot}".encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big")

    return max(range(cycle_weeks), key=lambda slot: (weight(slot), -slot))


def _utc_date(when: _dt.date | _dt.datetime) -> _dt.date:
    """The UTC date of ``when`` (a naive ``datetime`` is UTC)."""
    if isinstance(when, _dt.datetime):
        if when.tzinfo is not None:
            when = when.astimezone(_dt.timezone.utc)
        return when.date()
    return when


def week_index(when: _dt.date | _dt.datetime) -> int:
    """Whole weeks from ``EPOCH_MONDAY`` to the Monday of ``when``'s UTC ISO week."""
    day = _utc_date(when)
    monday = day - _dt.timedelta(days=day.weekday())
    return (monday - EPOCH_MONDAY).days // 7


def week_label(when: _dt.date | _dt.datetime) -> str:
    """The UTC ISO week of ``when``, e.g. ``"2026-W49"``."""
    year, week, _ = _utc_date(when).isocalendar()
    return f"{year}-W{week:02d}"


def slice_for(catalog: Catalog, when: _dt.date | _dt.datetime) -> list[Entry]:
    """Entries to re-measure in ``when``'s week, in catalog order, the reference included."""
    position = week_index(when) % catalog.cycle_weeks
    return [
        entry for entry in catalog.entries
        if entry.name == catalog.reference or slot_of(entry.name, catalog.cycle_weeks) == position
    ]


def slot_sizes(catalog: Catalog) -> list[int]:
    """Non-reference entries per slot ``0..cycle_weeks-1``."""
    sizes = [0] * catalog.cycle_weeks
    for entry in catalog.entries:
        if entry.name != catalog.reference:
            sizes[slot_of(entry.name, catalog.cycle_weeks)] += 1
    return sizes


def weeks_to_cover(entries: int, per_week: int) -> int:
    """The shortest cycle whose every slice, balance spread included, fits a sweep of ``per_week``
    servers; ``ValueError`` when none of ``MAX_CYCLE_WEEKS`` or fewer does."""
    others, room = max(0, entries - 1), per_week - 1
    for weeks in range(1, MAX_CYCLE_WEEKS + 1):
        spread = 0.0 if weeks == 1 else 3 * math.sqrt(others)  # the Hoeffding bound of docs/OPERATIONS.md
        if others / weeks + spread <= room:
            return weeks
    raise ValueError(f"{entries} entries do not fit weekly sweeps of {per_week} servers in any cycle "
                     f"of at most {MAX_CYCLE_WEEKS} weeks")
