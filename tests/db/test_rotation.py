"""Weekly rotation (harness/db/rotation.py): methodology, "How often a row gets a new point"."""
from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st
import pytest

from harness.db import rotation
from harness.db.catalog import Catalog, Entry, load_catalog
from harness.db.rotation import (EPOCH_MONDAY, slice_for, slot_of, slot_sizes, week_index,
                                 week_label)

REPO = Path(__file__).resolve().parents[2]
REAL = load_catalog(REPO / "servers.yaml")

names = st.from_regex(r"[a-z0-9][a-z0-9-]{0,24}", fullmatch=True)
name_sets = st.lists(names, min_size=1, max_size=150, unique=True)
dates = st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2100, 12, 31))
cycles = st.integers(min_value=1, max_value=8)
PROPERTY = settings(max_examples=150, deadline=None, derandomize=True)


def catalog_of(names_: list[str], cycle_weeks: int = 3, reference: str | None = None) -> Catalog:
    return Catalog(tuple(Entry(name=n, command=f"npx -y {n}") for n in names_), reference, cycle_weeks)


def cycle_weeks_of(when: dt.date, k: int) -> list[dt.date]:
    """The Mondays of the k weeks of the cycle containing ``when``."""
    monday = when - dt.timedelta(days=when.weekday())
    start = monday - dt.timedelta(weeks=week_index(when) % k)
    return [start + dt.timedelta(weeks=i) for i in range(k)]


@pytest.mark.slow
@PROPERTY
@given(name_sets, dates, cycles, st.data())
def test_each_entry_exactly_once_per_cycle_and_reference_every_week(ns, when, k, data):
    reference = data.draw(st.sampled_from(ns))
    catalog = catalog_of(ns, k, reference)
    weeks = [[e.name for e in slice_for(catalog, d)] for d in cycle_weeks_of(when, k)]
    for name in ns:
        seen = sum(name in week for week in weeks)
        assert seen == (k if name == reference else 1), (name, seen)
    assert all(reference in week for week in weeks)


@pytest.mark.slow
@PROPERTY
@given(name_sets, dates, cycles, names)
def test_adding_or_removing_an_entry_moves_no_other(ns, when, k, newcomer):
    base = catalog_of(ns, k)
    before = {e.name for e in slice_for(base, when)}
    if newcomer not in ns:
        grown = {e.name for e in slice_for(catalog_of(ns + [newcomer], k), when)}
        assert grown - {newcomer} == before
    gone = ns[len(ns) // 2]
    shrunk = {e.name for e in slice_for(catalog_of([n for n in ns if n != gone], k), when)}
    assert shrunk == before - {gone}
    reordered = {e.name for e in slice_for(catalog_of(list(reversed(ns)), k), when)}
    assert reordered == before


@PROPERTY
@given(name_sets, cycles)
def test_balance_bound(ns, k):
    """Hoeffding bound from the module docstring, t = 3*sqrt(n): P(miss) < 3e-8 per slice."""
    sizes = slot_sizes(catalog_of(ns, k))
    n = len(ns)
    assert sum(sizes) == n
    for size in sizes:
        assert abs(size - n / k) <= 3 * math.sqrt(n), sizes


@PROPERTY
@given(names, st.integers(min_value=1, max_value=12))
def test_growing_the_cycle_moves_only_into_the_new_slot(name, k):
    assert slot_of(name, k + 1) in (slot_of(name, k), k)


@pytest.mark.slow
@PROPERTY
@given(dates)
def test_slice_is_a_function_of_the_iso_week(when):
    catalog = REAL
    monday = when - dt.timedelta(days=when.weekday())
    expected = slice_for(catalog, monday)
    for offset in range(7):
        assert slice_for(catalog, monday + dt.timedelta(days=offset)) == expected
    assert week_label(when) == week_label(monday)


def test_week_index_epoch_and_utc():
    assert week_index(EPOCH_MONDAY) == 0 and EPOCH_MONDAY.weekday() == 0
    assert week_index(EPOCH_MONDAY - dt.timedelta(days=1)) == -1
    assert week_index(dt.date(2026, 11, 30)) == week_index(dt.date(2026, 12, 6))
    assert week_index(dt.date(2026, 12, 7)) == week_index(dt.date(2026, 11, 30)) + 1
    # Sunday 23:30 in UTC-5 is already Monday in UTC: the next ISO week.
    late = dt.datetime(2026, 12, 6, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    assert week_index(late) == week_index(dt.date(2026, 12, 7))
    assert week_label(dt.date(2026, 11, 30)) == "2026-W49"
    assert week_label(dt.date(2027, 1, 1)) == "2026-W53"


def test_slot_is_pinned():
    """Changing SALT or the hash would reassign every server: these values must never move."""
    assert [slot_of(n, 3) for n in ("memory", "fetch", "git", "filesystem", "playwright")] == \
        [0, 0, 0, 2, 1]
    assert slot_of("anything", 1) == 0


def test_real_catalog_slices(capsys):
    catalog = REAL
    sizes = slot_sizes(catalog)
    n = sum(sizes)
    assert n == len(catalog.entries) - 1
    assert all(abs(s - n / catalog.cycle_weeks) <= 3 * math.sqrt(n) for s in sizes)
    weeks = cycle_weeks_of(dt.date(2026, 11, 30), catalog.cycle_weeks)
    for d in weeks:
        print(week_label(d), len(slice_for(catalog, d)))
    assert sorted(len(slice_for(catalog, d)) - 1 for d in weeks) == sorted(sizes)


@pytest.mark.parametrize(("entries", "per_week", "weeks"), [
    (1, 2, 1), (96, 96, 1), (97, 96, 2), (5000, 11776, 1), (11776, 11776, 1), (11777, 11776, 2), (30000, 11776, 3),
])
def test_weeks_to_cover_fits_every_slice_into_one_sweep(entries, per_week, weeks):
    assert rotation.weeks_to_cover(entries, per_week) == weeks


@given(st.integers(1, 20000), st.integers(2, 20000))
def test_weeks_to_cover_is_the_shortest_cycle_that_fits(entries, per_week):
    try:
        weeks = rotation.weeks_to_cover(entries, per_week)
    except ValueError:
        assume(False)
    others = entries - 1
    fits = lambda k: others / k + (0 if k == 1 else 3 * others ** 0.5) <= per_week - 1  # noqa: E731
    assert fits(weeks) and not any(fits(k) for k in range(1, weeks))


def test_weeks_to_cover_refuses_what_no_cycle_fits():
    with pytest.raises(ValueError):
        rotation.weeks_to_cover(10**6, 100)
    with pytest.raises(ValueError):
        rotation.weeks_to_cover(10, 1)


def test_the_catalogs_cycle_fits_every_slice_into_one_sweep_run():
    from harness.db import shards

    catalog = load_catalog(Path(__file__).resolve().parents[2] / "servers.yaml")
    assert catalog.cycle_weeks >= rotation.weeks_to_cover(len(catalog.entries), shards.capacity())
