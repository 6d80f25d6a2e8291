"""Trend pictures (harness/pages/svg.py): valid SVG, readable text, fixed formatting, gaps."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from harness.db.history import HistoryRow
from harness.pages.series import comparable
from harness.pages.svg import sparkline, trend_chart

NS = "{http://www.w3.org/2000/svg}"


def series(*cells):
    return comparable([HistoryRow(f"2026-01-{i + 1:02d}", "s", t, None if t is None else 1,
                                  "measured" if t is not None else "timeout", iso) for i, (t, iso) in enumerate(cells)])


def test_title_desc_and_fixed_decimals():
    s = series((100, "host"), (120, None), (None, "host"), (90, "host"))
    for svg in (sparkline("s", s), trend_chart("s", s)):
        root = ET.fromstring(svg)
        assert root.find(f"{NS}title").text == "s: context cost over time"
        desc = root.find(f"{NS}desc").text
        assert "3 measurement(s) under host isolation, 2026-01-01 to 2026-01-04" in desc
        assert "1 row(s) have no isolation on record" in desc and "1 sweep(s) without a number are gaps" in desc
        numbers = re.findall(r'\s(?:cx|cy|r|x|y)="([^"]+)"', svg) + \
            " ".join(re.findall(r'points="([^"]+)"', svg)).replace(",", " ").split()
        assert numbers and all(re.fullmatch(r"\d+\.\d\d", n) for n in numbers), numbers
        assert len(root.findall(f"{NS}polyline")) == 1  # the gap splits the line; the lone last point has no segment


def test_hollow_points_for_not_recorded():
    chart = trend_chart("s", series((100, "host"), (120, None), (90, "host")))
    assert chart.count('fill="#ffffff"') == 1 and chart.count('fill="#1f5fa8"') == 2
    assert "hollow: isolation not recorded" in chart


def test_flat_and_single_point_and_empty():
    one = trend_chart("s", series((5, "host")))
    assert "<circle" in one and "<polyline" not in one
    flat = sparkline("s", series((5, "host"), (5, "host")))
    assert 'points="3.00,12.00 117.00,12.00"' in flat
    empty = trend_chart("s", series())
    assert "no comparable measurement on record" in empty
    assert "No comparable measurement with a number is on record." in empty


def test_deterministic():
    s = series((100, "host"), (120, None), (90, "host"))
    assert trend_chart("s", s) == trend_chart("s", s) and sparkline("s", s) == sparkline("s", s)


def test_text_escaped():
    assert "<script" not in sparkline("<script>", series((1, "host")))


def test_a_single_point_chart_says_it_is_no_trend_yet():
    """One comparable point is a lone dot: the chart says so in words and labels its one date once
    (as the dashboard and leaderboard read "since <date>")."""
    one = trend_chart("s", series((5, "host")))
    texts = [t.text for t in ET.fromstring(one).iter(f"{NS}text")]
    assert "one comparable point so far (2026-01-01): a trend needs a second sweep" in texts
    assert texts.count("2026-01-01") == 1
    gap = trend_chart("s", series((None, "host"), (5, "host")))  # a failed sweep, then one number
    assert "one comparable point so far (2026-01-02): a trend needs a second sweep" in \
        [t.text for t in ET.fromstring(gap).iter(f"{NS}text")]
    two = trend_chart("s", series((5, "host"), (6, "host")))
    assert "a trend needs a second sweep" not in two


def _marks_reference(segments, radius, all_points):
    """The marks with every number through ``_f``, one by one."""
    from harness.pages.svg import LINE, HOLLOW, _f
    out = []
    for segment in segments:
        if len(segment) > 1:
            out.append(f'<polyline points="{" ".join(f"{_f(x)},{_f(y)}" for x, y, _ in segment)}" fill="none" '
                       f'stroke="{LINE}" stroke-width="1.5"/>')
    flat = [(p, len(s) == 1) for s in segments for p in s]
    for index, ((x, y, recorded), alone) in enumerate(flat):
        if recorded and not all_points and not alone and index != len(flat) - 1:
            continue
        out.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(radius)}" fill="{LINE if recorded else HOLLOW}" '
                   f'stroke="{LINE}" stroke-width="1"/>')
    return out


def test_marks_format_every_number_as_f_does():
    """Minus zero is written 0.00 wherever it falls in a line or a point; other negatives keep their sign."""
    import random

    from harness.pages.svg import _marks
    rnd = random.Random(7)
    values = [0.0, -0.0, -0.004, -0.005, -0.006, 0.004, -1.5, 3.333, 117.0, 1e-9, -1e-9, 620.005]
    for _ in range(500):
        segments = [[(rnd.choice(values + [rnd.uniform(-2, 700)]), rnd.choice(values + [rnd.uniform(-2, 220)]),
                      rnd.random() < 0.8) for _ in range(rnd.randint(1, 4))] for _ in range(rnd.randint(0, 3))]
        for radius, all_points in ((1.8, False), (3.0, True), (-0.001, True)):
            assert _marks(segments, radius, all_points) == _marks_reference(segments, radius, all_points), segments
    assert 'points="0.00,0.00 -1.50,0.00"' in _marks([[(-0.001, -0.0, True), (-1.5, 0.004, True)]], 1.8, False)[0]
