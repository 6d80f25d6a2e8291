"""Cost movement rules (harness/pages/regressions.py; methodology "Cost movement", method
cost-regression/v1) on many small series of history rows, without launching anything: which pair,
window and held-since, mechanism, emphasis at both thresholds, failures as gaps, isolation runs,
attribution and "breakdown unavailable"; plus hostile tool names in the generated tables."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from harness.db.history import HistoryRow
from harness.pages import regressions as rg
from harness.pages import tool_vectors as tv
from harness.pages.regen import regen
from harness.pages.series import comparable
from harness.util import schemas
from tests.pages import builders as b


def rows(*specs) -> list[HistoryRow]:
    """``(date, tokens or None, tools, isolation)`` → history rows (None tokens = a timeout)."""
    out = []
    for date, tokens, tools, iso in specs:
        status = "timeout" if tokens is None else "measured"
        out.append(HistoryRow(date, "srv", tokens, None if tokens is None else tools, status, iso))
    return out


def move(*specs, vectors=None) -> rg.Movement:
    return rg.movement("srv", comparable(rows(*specs)), vectors or tv.VectorHistory("srv"))


@pytest.mark.parametrize("before, delta, expected", [
    (500, 25, True), (500, -25, True), (500, 24, False), (520, 25, False), (480, 24, False),
    (100, 25, True), (100, 24, False), (100, -24, False), (10_000, 499, False), (10_000, 500, True),
    (10_000, -500, True), (0, 25, True), (0, 24, False), (20, 25, True), (1_000_000, 25, False),
])
def test_emphasis_needs_both_thresholds_exactly(before, delta, expected):
    assert rg.clears(before, delta) is expected
    m = move(("2026-01-05", before, 3, "host"), ("2026-01-12", before + delta, 3, "host"))
    assert m.state == rg.MOVED and m.emphasised is expected and m.delta == delta
    assert m.percent is None if before == 0 else m.percent == pytest.approx(100 * delta / before)


@pytest.mark.parametrize("tokens, tools, mechanism", [
    (10, 1, "more tools"), (-10, -1, "fewer tools"), (10, 0, "heavier tools"), (-10, 0, "lighter tools"),
    (-10, 1, "mixed"), (10, -2, "mixed"), (0, 1, "mixed"), (0, -1, "mixed"),
])
def test_mechanism_from_totals(tokens, tools, mechanism):
    assert rg.mechanism(tokens, tools) == mechanism
    m = move(("2026-01-05", 100, 5, "host"), ("2026-01-12", 100 + tokens, 5 + tools, "host"))
    assert m.mechanism == mechanism


def test_walks_back_through_the_trailing_identical_run():
    m = move(("2026-01-05", 100, 2, "host"), ("2026-01-12", 150, 3, "host"), ("2026-01-19", 150, 3, "host"),
             ("2026-01-26", 150, 3, "host"), ("2026-02-02", 150, 3, "host"))
    assert (m.before.date, m.after.date, m.held_since, m.held_sweeps, m.held_days) == \
        ("2026-01-05", "2026-01-12", "2026-01-12", 4, 21)
    back = move(("2026-01-05", 100, 2, "host"), ("2026-01-12", 150, 3, "host"), ("2026-01-19", 100, 2, "host"))
    assert (back.before.date, back.after.date, back.delta, back.held_sweeps) == ("2026-01-12", "2026-01-19", -50, 1)
    count_only = move(("2026-01-05", 100, 2, "host"), ("2026-01-12", 100, 3, "host"))
    assert count_only.state == rg.MOVED and count_only.delta == 0 and not count_only.emphasised


def test_unchanged_and_nothing_to_compare():
    same = move(("2026-01-05", 100, 2, "host"), ("2026-01-12", 100, 2, "host"))
    assert (same.state, same.held_since, same.held_sweeps, same.delta) == (rg.UNCHANGED, "2026-01-05", 2, None)
    one = move(("2026-01-05", 100, 2, "host"))
    assert (one.state, one.held_sweeps, one.held_days) == (rg.UNCHANGED, 1, 0)
    assert move().state == rg.NONE
    assert move(("2026-01-05", None, 0, "host"), ("2026-01-12", None, 0, "host")).state == rg.NONE


def test_failures_are_gaps_never_zeros():
    m = move(("2026-01-05", 100, 2, "host"), ("2026-01-12", None, 0, "host"), ("2026-01-19", None, 0, "host"),
             ("2026-01-26", 130, 2, "host"), ("2026-02-02", None, 0, "host"))
    assert (m.before.date, m.after.date, m.delta, m.held_sweeps) == ("2026-01-05", "2026-01-26", 30, 1)
    assert m.latest.date == "2026-01-26"
    steady = move(("2026-01-05", 100, 2, "host"), ("2026-01-12", None, 0, "host"), ("2026-01-19", 100, 2, "host"))
    assert steady.state == rg.UNCHANGED and steady.held_sweeps == 2


def test_an_isolation_change_starts_a_new_comparable_run():
    m = move(("2026-01-05", 100, 2, "docker"), ("2026-01-12", 200, 2, "docker"), ("2026-01-19", 900, 2, "host"),
             ("2026-01-26", 900, 2, None), ("2026-02-02", 900, 2, "host"))
    assert m.state == rg.UNCHANGED and m.series.starts == "2026-01-19" and m.held_sweeps == 3
    again = move(("2026-01-05", 100, 2, "docker"), ("2026-01-12", 900, 2, "host"), ("2026-01-19", 950, 2, None),
                 ("2026-01-26", 950, 2, "host"))
    assert (again.before.date, again.after.date, again.delta) == ("2026-01-12", "2026-01-19", 50)


def _vectors(*records) -> tv.VectorHistory:
    history = tv.VectorHistory("srv")
    for record in records:
        history = tv.advance(history, record, "results/srv/measurement.json")
    return history


def _rec(tools, day):
    return b.measured("srv", tools, measuredAt=f"{day}T12:00:00.000Z")


OLD = [b.tool("dup", "One."), b.tool("dup", "Two."), b.tool("keep", "Same."), b.tool("shift", "Longer words here.", {}),
       b.tool("gone", "Removed later.")]
NEW = [b.tool("dup", "One."), b.tool("dup", "Two, now much longer than before."), b.tool("keep", "Same."),
       b.tool("shift", "Longer", {"type": "object", "properties": {"x": {}}}), b.tool("added", "New.")]


def test_attribution_names_every_changed_tool_and_publishes_the_remainder():
    from harness.core.counting import count_tools

    old, new = count_tools(OLD), count_tools(NEW)
    history = _vectors(_rec(OLD, "2026-01-05"), _rec(NEW, "2026-01-12"))
    m = move(("2026-01-05", old.totalTokens, 5, "host"), ("2026-01-12", new.totalTokens, 5, "host"), vectors=history)
    changes = {(t.name, t.change) for t in m.breakdown.tools}
    assert ("dup", "heavier") in changes and ("gone", "removed") in changes and ("added", "added") in changes
    assert ("keep", "heavier") not in changes and len([t for t in m.breakdown.tools if t.name == "dup"]) == 1
    shift = next(t for t in m.breakdown.tools if t.name == "shift")
    assert shift.part(1) < 0 < shift.part(2)
    assert m.breakdown.attributed == sum(t.delta for t in m.breakdown.tools)
    assert m.breakdown.unattributed == m.delta - m.breakdown.attributed
    assert m.delta == new.totalTokens - old.totalTokens
    dup = next(t for t in m.breakdown.tools if t.name == "dup")  # the second "dup" grew, matched by occurrence
    assert dup.before[0] == old.tools[1].tokens and dup.after[0] == new.tools[1].tokens
    doc = rg.to_json([m])
    schemas.check("regressions", doc)
    assert doc["servers"][0]["breakdown"]["unattributed"] == m.breakdown.unattributed


def test_breakdown_unavailable_in_those_words():
    none = move(("2026-01-05", 100, 2, "host"), ("2026-01-12", 150, 3, "host"))
    assert none.breakdown is None and none.unavailable.startswith("breakdown unavailable: no tool vectors")
    from harness.core.counting import count_tools

    late = _vectors(_rec(NEW, "2026-01-12"))
    m = move(("2026-01-05", 100, 5, "host"), ("2026-01-12", count_tools(NEW).totalTokens, 5, "host"), vectors=late)
    assert m.unavailable == ("breakdown unavailable: the tool vectors (from 2026-01-12) hold no capture of the "
                             "2026-01-05 measurement")
    entry = rg.to_json([m])["servers"][0]
    assert entry["breakdown"] is None and entry["breakdownUnavailable"] == m.unavailable


def test_hostile_tool_names_stay_inside_the_cost_movement_table(tmp_path):
    from tests.pages.test_hostile_text import TOOLS

    b.write_catalog(tmp_path, [b.entry("evil")])
    first, second = b.measured("evil", TOOLS[:3], measuredAt="2026-01-05T12:00:00.000Z"), \
        b.measured("evil", TOOLS, measuredAt="2026-01-12T12:00:00.000Z")
    b.write_record(tmp_path, first)
    b.write_history(tmp_path, [f"2026-01-05,evil,{first['totalTokens']},3,measured,host"])
    regen(tmp_path)
    b.write_record(tmp_path, second)
    b.write_history(tmp_path, [f"2026-01-05,evil,{first['totalTokens']},3,measured,host",
                               f"2026-01-12,evil,{second['totalTokens']},{len(TOOLS)},measured,host"])
    regen(tmp_path)
    page = (tmp_path / "docs/servers/evil.md").read_text(encoding="utf-8")
    section = page.split("## Cost movement", 1)[1]
    table = b.md_tables(section)[0]
    assert len(table) == 1 + len(TOOLS) - 3 + 1 and len({len(r) for r in table}) == 1
    rendered = MarkdownIt("commonmark", {"html": True}).enable(["table"]).render(section)
    assert "<script" not in rendered.lower() and "<img" not in rendered.lower()
