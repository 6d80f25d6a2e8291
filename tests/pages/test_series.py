"""The comparable series (harness/pages/series.py; methodology "Trends over time")."""

from __future__ import annotations

from harness.db.history import HistoryRow
from harness.pages.series import comparable


def rows(spec: str) -> list[HistoryRow]:
    """``"d h ? x"`` → one row per letter, a week apart: d=docker, h=host, s=sandbox, ?=not
    recorded; upper case = failed (no number)."""
    out = []
    for i, ch in enumerate(spec.split()):
        iso = {"d": "docker", "h": "host", "s": "sandbox", "?": None}[ch.lower()]
        failed = ch.isupper()
        out.append(HistoryRow(f"2026-01-{i + 1:02d}", "s", None if failed else 100 + i, None if failed else 1,
                              "timeout" if failed else "measured", iso))
    return out


def kept(spec: str) -> tuple[list[str], str | None, int]:
    s = comparable(rows(spec))
    return [r.date[-2:] for r in s.rows], s.isolation, len(s.left_out)


def test_single_isolation_keeps_everything():
    assert kept("h h h") == (["01", "02", "03"], "host", 0)


def test_switch_cuts_older_rows():
    assert kept("d d h h") == (["03", "04"], "host", 2)


def test_not_recorded_never_breaks_the_run():
    assert kept("d h ? h") == (["02", "03", "04"], "host", 1)
    assert kept("h ? d d") == (["02", "03", "04"], "docker", 1)


def test_newest_row_not_recorded_uses_newest_recorded_isolation():
    assert kept("d h ?") == (["02", "03"], "host", 1)


def test_nothing_recorded_everything_plots():
    s = comparable(rows("? ? ?"))
    assert (len(s.rows), s.isolation, s.unrecorded, s.starts) == (3, None, 3, "2026-01-01")


def test_failed_rows_belong_but_do_not_plot():
    s = comparable(rows("d H h"))
    assert [r.date[-2:] for r in s.rows] == ["02", "03"]
    assert [r.date[-2:] for r in s.points] == ["03"]


def test_only_measured_rows_decide_the_run():
    """A failure contributes no point, so under another isolation it neither ends nor
    starts a comparable run; it stays as a gap."""
    assert kept("h D h") == (["01", "02", "03"], "host", 0)
    assert kept("h S D h") == (["01", "02", "03", "04"], "host", 0)
    assert kept("d h D S h") == (["02", "03", "04", "05"], "host", 1)
    assert kept("h h D") == (["01", "02", "03"], "host", 0)  # the newest row failed under docker
    assert comparable(rows("h h D")).isolation == "host"  # ... and does not set the run's isolation
    assert kept("h D ? h") == (["01", "02", "03", "04"], "host", 0)


def test_failures_before_the_first_point_under_another_isolation_belong_to_the_older_run():
    assert kept("d D h") == (["03"], "host", 2)
    assert kept("d D H h") == (["03", "04"], "host", 2)  # a failure under the run's own isolation opens it
    assert kept("D h") == (["02"], "host", 1)
    assert kept("D H") == (["01", "02"], None, 0)  # no point at all: nothing decides, everything shows


def test_empty():
    s = comparable([])
    assert s.rows == () and s.starts is None and s.isolation is None
