"""Weekly rotation: which catalog entries a scheduled sweep re-measures in a given week.

Methodology, "How often a row gets a new point": one deterministic slice of the server list is
re-measured each week, derived from the date alone, so the whole set is refreshed on a rolling
``cycle_weeks``-week cycle (default 3); the reference server is re-measured every week.

Time. A date belongs to its UTC ISO week (Monday to Sunday). ``week_index(d)`` counts whole weeks
from ``EPOCH_MONDAY`` (1969-12-29, the Monday of ISO week 1970-W01) to the Monday of ``d``'s week;
the week's position in the cycle is ``week_index(d) % cycle_weeks``. A week in which the job does
not run simply passes: those entries come round again next cycle.

Assignment. ``slot_of(name, k)`` is rendezvous (highest-random-weight) hashing: the slot ``j`` in
``0..k-1`` maximising ``sha256(SALT, name, j)``. It depends on the entry's name alone, never on
its position or on the other entries. Guarantees:

* Exactly once per cycle: every entry other than the reference is in exactly one of the ``k``
  slices of every cycle; the reference is in all of them.
* Stable membership: adding, removing or reordering other entries moves no entry between slices
  (renaming an entry is a removal plus an addition). Changing ``k`` to ``k + 1`` moves only the
  entries whose new slot is ``k`` (about one in ``k + 1``); every other entry keeps its slot. A
  plain ``hash % k`` would reshuffle nearly all of them.
* Balanced, in the only sense stability allows. Stability under every addition and removal forces
  the slot to be a function of the name alone, so no deterministic size bound can hold for every
  possible set of names (names could be picked that all land in one slot). For names not chosen
  with knowledge of the hash, the non-reference entries in a slice number ``S ~ Binomial(n, 1/k)``
  and Hoeffding gives ``P(|S - n/k| >= t) <= 2*exp(-2*t**2/n)``: with ``t = 3*sqrt(n)`` that is
  below 3e-8 per slice. ``SALT`` was fixed once (2026-11-30) as the first value for which the
  catalog of that day (95 entries besides the reference) splits 32/31/32 for ``k = 3`` (the
  untuned salt split it 24/34/37); entries added later land as the bound above says. ``SALT``
  must never change: that would reassign every entry at once.

Each slice as published holds its share of the non-reference entries plus the reference.
"""
from __future__ import annotations

import datetime as _dt
import hashlib

from harness.db.catalog import Catalog, Entry

EPOCH_MONDAY = _dt.date(1969, 12, 29)
SALT = "mcp-context-cost/rotation/v1/s86"


def slot_of(name: str, cycle_weeks: int) -> int:
    """The slot in ``0..cycle_weeks-1`` whose week re-measures ``name``.

    Raises ``ValueError`` if ``cycle_weeks < 1``.
    """
    if cycle_weeks < 1:
        raise ValueError(f"cycle_weeks must be >= 1, got {cycle_weeks}")

    def weight(slot: int) -> int:
        digest = hashlib.sha256(f"{SALT}\x00{name}\x00{slot}".encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big")

    return max(range(cycle_weeks), key=lambda slot: (weight(slot), -slot))


def _utc_date(when: _dt.date | _dt.datetime) -> _dt.date:
    """A ``date`` as given; a ``datetime`` converted to UTC first (naive means UTC)."""
    if isinstance(when, _dt.datetime):
        if when.tzinfo is not None:
            when = when.astimezone(_dt.timezone.utc)
        return when.date()
    return when


def week_index(when: _dt.date | _dt.datetime) -> int:
    """Whole weeks from ``EPOCH_MONDAY`` to the Monday of ``when``'s UTC ISO week (negative
    before the epoch). Every day of one ISO week gives the same number."""
    day = _utc_date(when)
    monday = day - _dt.timedelta(days=day.weekday())
    return (monday - EPOCH_MONDAY).days // 7


def week_label(when: _dt.date | _dt.datetime) -> str:
    """The UTC ISO week of ``when``, e.g. ``"2026-W49"``."""
    year, week, _ = _utc_date(when).isocalendar()
    return f"{year}-W{week:02d}"


def slice_for(catalog: Catalog, when: _dt.date | _dt.datetime) -> list[Entry]:
    """Entries to re-measure in ``when``'s week, in catalog order: those whose slot is this
    week's position in the cycle, plus the reference entry (if the catalog names one)."""
    position = week_index(when) % catalog.cycle_weeks
    return [
        entry for entry in catalog.entries
        if entry.name == catalog.reference or slot_of(entry.name, catalog.cycle_weeks) == position
    ]


def slot_sizes(catalog: Catalog) -> list[int]:
    """Number of non-reference entries in each slot ``0..cycle_weeks-1`` (the balance measure)."""
    sizes = [0] * catalog.cycle_weeks
    for entry in catalog.entries:
        if entry.name != catalog.reference:
            sizes[slot_of(entry.name, catalog.cycle_weeks)] += 1
    return sizes
