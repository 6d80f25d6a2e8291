"""``docs/index.html``: the static dashboard (GitHub Pages root).

One self-contained file: inline CSS, inline SVG sparklines, one inline script allowed by its hash
(:mod:`harness.publish.dashboard_assets`), no external request (the Content-Security-Policy says so
to the browser too), relative links only. Sections (issue #5; issue #15, "The dashboard"):

* a short "how to read this" line;
* the status counts (every status) and the newest measurement;
* the distribution of measured servers across the colour bands: a labelled bar per band, each with
  a distinct outlined swatch (badges keep the shields colour names);
* the leaderboard — one ``<tr>`` per catalog entry in ``table#leaderboard``, ranked rows first —
  complete and readable without JavaScript; with it, sort by any column and filter by server name,
  tool name or status. Names break at ``_``, ``-`` and case boundaries (``<wbr>``); a trend with a
  single point reads "since <date>"; a failure shows its short reason
  (:func:`harness.db.reason.reason`) with the full notes behind ``<details>``. Below 720 px each row
  is a card, so a 390 px screen never scrolls sideways;
* the rows where deferring costs more, and links to the HTML server pages and the methodology.

All recorded text is reduced to one line and escaped (``html.escape`` via
:mod:`harness.publish.htmltext`). Same inputs → same bytes.
"""

from __future__ import annotations

import html

from harness.core import bands
from harness.db import reason
from harness.publish import dashboard_assets as assets
from harness.publish import readings_html, site, svg
from harness.publish.board import Row, machine_note, status_counts
from harness.publish.htmltext import breakable, shorten
from harness.publish.series import Series, not_measured_since
from harness.publish.text import num, one_line

HERE = site.DASHBOARD
REASON_LIMIT = 110
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
       f"script-src {assets.script_hash()}")
# (key, heading, numeric?) of the leaderboard's columns, in order.
COLUMNS = (("rank", "#", True), ("name", "Server", False), ("status", "Status", False), ("tokens", "Tokens", True),
           ("tools", "Tools", True), ("largest", "Largest tool", False), ("session", "Session start", True),
           ("band", "Band", True), ("trend", "Trend", True), ("note", "Notes", False))


def render(rows: list[Row], series: dict[str, Series], sparks: dict[str, str] | None = None) -> str:
    """The page text for ``rows`` (published order) and each row's comparable ``series``;
    ``sparks`` maps a name to its already-drawn sparkline (drawn here when missing)."""
    e = html.escape
    methodology = site.link(HERE, site.METHODOLOGY)
    leaderboard = site.link(HERE, site.LEADERBOARD_MD)
    newest = max((one_line(r.record.get("measuredAt"))[:10] for r in rows if r.record), default="")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{e(CSP)}">',
        "<title>mcp-context-cost: what MCP servers cost in context tokens</title>",
        f"<style>\n{assets.CSS}\n</style>",
        "</head>",
        "<body>",
        "<main>",
        "<h1>What MCP servers cost in context tokens</h1>",
        "<p>Each number is the o200k_base token count of the canonical bytes of a server's "
        "<code>tools/list</code> result: what a client that loads every tool definition pays before a "
        f"single tool is called. How it is made and what it is not: <a href=\"{e(methodology)}\">"
        f"{e(site.METHODOLOGY_LABEL)}</a>. The same table as Markdown and CSV: "
        f"<a href=\"{e(leaderboard)}\">leaderboard</a>.</p>",
        "<p>What moved since each server's previous cost: "
        f"<a href=\"{e(site.link(HERE, site.REGRESSIONS_MD))}\">cost movement</a>.</p>",
        '<p class="howto" id="how-to-read"><b>How to read this:</b> one row per server, largest cost first. '
        "<b>Tokens</b> is what loading all of its tool definitions costs a client up front — fewer is "
        "leaner; the <b>band</b> names the range; <b>Trend</b> follows comparable sweeps; a server without "
        "a number shows its status and why. Each name opens the server's own page.</p>",
        *_counts(rows, newest),
        *_distribution(rows),
        *_table(rows, series, sparks or {}),
        *_deferring(rows),
        *readings_html.dashboard_section(rows),
        "</main>",
        f"<script>{assets.SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _counts(rows: list[Row], newest: str) -> list[str]:
    items = "".join(f"<li><b>{count}</b> {html.escape(status)}</li>" for status, count in status_counts(rows).items())
    when = f" Newest measurement: {html.escape(newest)}." if newest else ""
    return ['<section aria-labelledby="h-status">', '<h2 id="h-status">Statuses</h2>',
            f'<p class="muted">{len(rows)} catalog entries, each with exactly one status.{when}</p>',
            f'<ul class="counts" id="status-counts">{items}</ul>',
            *([f'<p class="muted" id="machine-note">{html.escape(machine_note(rows))}.</p>'] if machine_note(rows) else []),
            "</section>"]


def _band_ranges() -> list[tuple[str, str]]:
    """``(label, token range)`` of each band (methodology, "Color bands")."""
    out, lower = [], 0
    for upper, _colour, label in bands.BANDS:
        text = f"< {num(upper)}" if lower == 0 else (f"≥ {num(lower)}" if upper is None else f"{num(lower)} – {num(upper - 1)}")
        out.append((label, text))
        lower = upper or lower
    return out


def _distribution(rows: list[Row]) -> list[str]:
    """A bar per band: how many measured servers fall in it (width relative to the largest band)."""
    labels = [r.band[1] for r in rows if r.tokens is not None]
    counts = {label: labels.count(label) for label, _ in _band_ranges()}
    widest = max(counts.values(), default=0) or 1
    cells = []
    for label, text in _band_ranges():
        count, cls = counts[label], assets.band_class(label)
        width = f"{100 * count / widest:.1f}%"
        bar = f'<span class="bar {cls}" style="width:{width}"></span>' if count else ""
        cells.append(f'<div class="label {cls}"><span class="sw"></span>{html.escape(label)}'
                     f'<span class="range">{html.escape(text)} tokens</span></div>'
                     f'<div class="track">{bar}</div>'
                     f'<div class="count" data-band="{html.escape(label)}">{count}</div>')
    return ['<section aria-labelledby="h-bands">', '<h2 id="h-bands">Measured servers by band</h2>',
            f'<p class="muted">{len(labels)} server(s) with a number, by colour band.</p>',
            f'<div class="dist" id="distribution" role="table" aria-label="Measured servers by band">{"".join(cells)}</div>',
            "</section>"]


def _controls(rows: list[Row]) -> str:
    statuses = [s for s, count in status_counts(rows).items() if count]
    options = "".join(f'<option value="{html.escape(s)}">{html.escape(s)}</option>' for s in statuses)
    return ('<form id="controls" hidden>'
            '<label for="filter-text">Server or tool name<input type="search" id="filter-text" '
            'placeholder="e.g. github or search_issues" autocomplete="off"></label>'
            f'<label for="filter-status">Status<select id="filter-status"><option value="">all</option>{options}'
            "</select></label>"
            '<label for="sort-key">Sort by<select id="sort-key"></select></label>'
            '<output id="filter-count" aria-live="polite"></output></form>')


def _table(rows: list[Row], series: dict[str, Series], sparks: dict[str, str]) -> list[str]:
    head = "".join(_th(key, title, numeric) for key, title, numeric in COLUMNS)
    body = [_row(r, series.get(r.name), sparks.get(r.name)) for r in rows]
    return ['<section aria-labelledby="h-board">', '<h2 id="h-board">Leaderboard</h2>',
            '<p class="muted">Ranked by tokens, largest first; ties by name. Session start: tool-name list '
            "plus server instructions (deferred-load/v1); ≥ marks a floor where instructions were not "
            "captured. Every other entry follows with its status: failures are findings.</p>",
            _controls(rows),
            f'<table id="leaderboard"><thead><tr>{head}</tr></thead><tbody>', *body, "</tbody></table>", "</section>"]


def _row(r: Row, series: Series | None, spark: str | None) -> str:
    e = html.escape
    link = e(site.link(HERE, site.server_html(r.name)))
    tools = " | ".join(one_line(t.get("name")).lower() for t in (r.record or {}).get("tools") or [] if isinstance(t, dict))
    largest = f"{breakable(r.largest[0], 80)} ({num(r.largest[1])})" if r.largest else "—"
    band_rank = next((i for i, (_, _, label) in enumerate(bands.BANDS) if label == r.band[1]), None)
    band = (f'<span class="{assets.band_class(r.band[1])}"><span class="sw"></span>{e(r.band[1])}</span>'
            if r.tokens is not None else "—")
    trend, trend_key = _trend(r, series, spark)
    note, note_key = _note(r)
    cells = [
        ("rank", "n rank", r.rank or "", _key(r.rank)),
        ("name", "name", f'<a href="{link}">{breakable(r.name, 80)}</a>', None),
        ("status", "st", _status(r, series), None),
        ("tokens", "n", num(r.tokens), _key(r.tokens)),
        ("tools", "n", num(r.tool_count), _key(r.tool_count)),
        ("largest", "name", largest, e(one_line(r.largest[0]).lower()) if r.largest else ""),
        ("session", "n", e(r.session.label()) if r.session else "—", _key(r.session.tokens if r.session else None)),
        ("band", "st", band, _key(band_rank if r.tokens is not None else None)),
        ("trend", "trend", trend, trend_key),
        ("note", "note", note, note_key),
    ]
    tds = "".join(_td(key, cls, content, sort) for key, cls, content, sort in cells)
    return (f'<tr data-status="{e(r.status)}" data-name="{e(one_line(r.name).lower())}" data-tools="{e(tools)}">'
            f"{tds}</tr>")


def _status(r: Row, series: Series | None) -> str:
    """The status, and since when the machine could not measure it again when that is so."""
    stale = not_measured_since(r.status, series) if series is not None else None
    e = html.escape
    return e(r.status) if stale is None else f'{e(r.status)}<br><small>not measured here since {e(stale[0])}</small>'


def _th(key: str, title: str, numeric: bool) -> str:
    kind = ' data-type="number"' if numeric else ""
    align = ' class="n"' if key in ("rank", "tokens", "tools", "session") else ""
    return f'<th scope="col" data-key="{key}"{kind}{align}>{html.escape(title)}</th>'


def _td(key: str, cls: str, content: object, sort: str | None) -> str:
    """A cell; ``data-label`` names its column on narrow screens, ``data-sort`` is its sort key
    (already escaped; absent: the cell's text)."""
    title = next(t for k, t, _ in COLUMNS if k == key)
    sort_attr = "" if sort is None else f' data-sort="{sort}"'
    if str(content) in ("", "—"):
        cls += " none"  # nothing to show: a narrow screen leaves the line out of the card
    return f'<td class="c-{key} {cls}" data-label="{html.escape(title)}"{sort_attr}>{content}</td>'


def _key(value: int | float | None) -> str:
    return "" if value is None else str(value)


def _trend(r: Row, series: Series | None, spark: str | None) -> tuple[str, str]:
    """The sparkline once there are two comparable points; "since <date>" for one; nothing for
    none. Sort key: relative change from the first to the last point."""
    points = series.points if series else ()
    if len(points) >= 2:
        first, last = points[0].tokens, points[-1].tokens
        change = f"{(last - first) / first:.6f}" if first else ""
        return (spark or svg.sparkline(r.name, series)).strip(), change
    if len(points) == 1:
        return f'<span class="since">since {html.escape(points[0].date)}</span>', "0"
    return "", ""


def _note(r: Row) -> tuple[str, str]:
    """The short reason, with every note behind a disclosure when it says more."""
    full = "; ".join(r.notes)
    short = shorten(reason.reason(r.record) if r.record and r.tokens is None else full, REASON_LIMIT)
    if not short:
        return "", ""
    e = html.escape
    text = f'<span class="reason">{e(short)}</span>'
    if one_line(full) != short:
        text += f"<details><summary>full note</summary><p>{e(one_line(full, 4000))}</p></details>"
    return text, e(short.lower())


def _deferring(rows: list[Row]) -> list[str]:
    costly = [r for r in rows if r.defers_costlier]
    out = ['<section aria-labelledby="h-defer">', '<h2 id="h-defer">Where deferring costs more</h2>']
    if not costly:
        return out + ["<p>No measured entry has a session-start load above its headline number.</p>", "</section>"]
    items = "".join(f'<li><a href="{html.escape(site.link(HERE, site.server_html(r.name)))}">{breakable(r.name)}</a>: '
                    f"{html.escape(r.session.label())} tokens at session start against {num(r.tokens)} for every "
                    "definition up front</li>" for r in costly)
    return out + [f'<ul id="deferring">{items}</ul>', "</section>"]
