"""Trend pictures as static SVG: :func:`sparkline` (120×24) and :func:`trend_chart` (640×220).

Rules: docs/PAGES.md, "Dashboard, calculator, server pages".
"""

from __future__ import annotations

import datetime as dt
import functools
import html

from harness.pages.series import Series
from harness.pages.text import num

LINE = "#1f5fa8"
HOLLOW = "#ffffff"


def _f(value: float) -> str:
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


@functools.lru_cache(maxsize=4096)
def _day(date: str) -> int:
    return dt.date.fromisoformat(date).toordinal()


def describe(name: str, series: Series) -> tuple[str, str]:
    """``(title, desc)`` texts for a server's trend picture."""
    points = series.points
    title = f"{name}: context cost over time"
    if series.token_range is None:
        return title, "No comparable measurement with a number is on record."
    low, high = series.token_range
    where = f"under {series.isolation} isolation" if series.isolation else "isolation not recorded"
    desc = (f"{len(points)} measurement(s) {where}, {points[0].date} to {points[-1].date}; "
            f"range {num(low)} to {num(high)} tokens; latest {num(points[-1].tokens)} tokens.")
    if series.unrecorded:
        desc += f" {series.unrecorded} row(s) have no isolation on record (hollow points)."
    failed = len(series.rows) - len(points)
    if failed:
        desc += f" {failed} sweep(s) without a number are gaps."
    return title, desc


def _layout(series: Series, x0: float, x1: float, y0: float, y1: float):
    """Segments of ``(x, y, recorded)`` points, split at rows without a number."""
    rows = series.rows
    if series.token_range is None:
        return []
    first, last = _day(rows[0].date), _day(rows[-1].date)
    low, high = series.token_range
    segments: list[list[tuple[float, float, bool]]] = []
    current: list[tuple[float, float, bool]] = []
    for row in rows:
        if row.tokens is None:
            if current:
                segments.append(current)
            current = []
            continue
        x = (x0 + x1) / 2 if last == first else x0 + (x1 - x0) * (_day(row.date) - first) / (last - first)
        y = (y0 + y1) / 2 if high == low else y1 - (y1 - y0) * (row.tokens - low) / (high - low)
        current.append((x, y, row.isolation is not None))
    if current:
        segments.append(current)
    return segments


def _marks(segments, radius: float, all_points: bool) -> list[str]:
    out = []
    for segment in segments:
        if len(segment) > 1:
            coords = " ".join([f"{x:.2f},{y:.2f}" for x, y, _ in segment])
            if "-" in coords:  # a "-0.00" is written "0.00"
                coords = " ".join(f"{_f(x)},{_f(y)}" for x, y, _ in segment)
            out.append(f'<polyline points="{coords}" fill="none" stroke="{LINE}" stroke-width="1.5"/>')
    flat = [(p, len(s) == 1) for s in segments for p in s]
    r = _f(radius)
    last = len(flat) - 1
    for index, ((x, y, recorded), alone) in enumerate(flat):
        if recorded and not all_points and not alone and index != last:
            continue
        fill = LINE if recorded else HOLLOW
        cx, cy = f"{x:.2f}", f"{y:.2f}"
        if cx[0] == "-" or cy[0] == "-":
            cx, cy = _f(x), _f(y)
        out.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{fill}" stroke="{LINE}" stroke-width="1"/>')
    return out


def sparkline(name: str, series: Series) -> str:
    """A 120×24 sparkline: the line, the latest point, any point a gap isolates, and hollow points
    for unrecorded isolation."""
    title, desc = describe(name, series)
    body = _marks(_layout(series, 3, 117, 3, 21), 1.8, all_points=False)
    if not body:
        body = ['<line x1="3" y1="12" x2="117" y2="12" stroke="#bbbbbb" stroke-dasharray="2 3"/>']
    return _svg(120, 24, title, desc, body)


def trend_chart(name: str, series: Series) -> str:
    """A 640×220 chart with the token range and the first and last dates labelled."""
    title, desc = describe(name, series)
    x0, x1, y0, y1 = 78.0, 620.0, 20.0, 180.0
    body = [f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" height="{_f(y1 - y0)}" fill="none" stroke="#dddddd"/>']
    points = series.points
    if series.token_range is not None:
        low, high = series.token_range
        if high == low:  # a flat series is drawn mid-height
            body.append(_text(x0 - 6, (y0 + y1) / 2 + 4, num(high), "end"))
        else:
            body += [_text(x0 - 6, y0 + 12, num(high), "end"), _text(x0 - 6, y1 - 4, num(low), "end")]
        first, last = series.rows[0].date, series.rows[-1].date
        body += ([_text(x0, y1 + 20, first, "start"), _text(x1, y1 + 20, last, "end")] if first != last
                 else [_text((x0 + x1) / 2, y1 + 20, first, "middle")])
        body.append(_text(x0 - 6, y0 - 6, "tokens", "end"))
        if len(points) == 1:  # a lone dot is no trend: say so, as the pages do
            body.append(_text((x0 + x1) / 2, y0 + 20, f"one comparable point so far ({points[0].date}): "
                                                      "a trend needs a second sweep", "middle"))
        body += _marks(_layout(series, x0 + 6, x1 - 6, y0 + 8, y1 - 8), 3.0, all_points=True)
        if series.unrecorded:  # below the one centred date, beside the two end dates
            body.append(_text((x0 + x1) / 2, y1 + (34 if first == last else 20), "hollow: isolation not recorded",
                              "middle"))
    else:
        body.append(_text((x0 + x1) / 2, (y0 + y1) / 2, "no comparable measurement on record", "middle"))
    return _svg(640, 220, title, desc, body)


def _text(x: float, y: float, text: str, anchor: str) -> str:
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-family="sans-serif" '
            f'font-size="11" fill="#444444">{html.escape(text)}</text>')


def _svg(width: int, height: int, title: str, desc: str, body: list[str]) -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img">')
    return "\n".join([head, f"<title>{html.escape(title)}</title>", f"<desc>{html.escape(desc)}</desc>",
                      *body, "</svg>"]) + "\n"
