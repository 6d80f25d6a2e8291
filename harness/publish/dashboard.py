"""``docs/index.html``: the static dashboard (GitHub Pages root).

One self-contained file: inline CSS, inline SVG sparklines, no script, no external request (a
Content-Security-Policy of ``default-src 'none'`` says so to the browser too), relative links only.
It shows the status counts (all ten), the colour bands with how many entries fall in each, the
leaderboard — one ``<tr>`` per catalog entry in ``table#leaderboard``, ranked rows first — the rows
where deferring costs more, and links to every server page and to the methodology. All recorded
text is escaped with ``html.escape``.
"""

from __future__ import annotations

import html

from harness.core import bands
from harness.publish import readings_html, site, svg
from harness.publish.board import Row, status_counts
from harness.publish.series import Series
from harness.publish.text import num, one_line

HERE = site.DASHBOARD
HEX = {"brightgreen": "#44cc11", "green": "#97ca00", "yellow": "#dfb317", "orange": "#fe7d37",
       "red": "#e05d44", "lightgrey": "#9f9f9f"}
CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#fff;margin:0}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 8px}h2{font-size:19px;margin:28px 0 8px}
table{border-collapse:collapse;width:100%}th,td{padding:5px 8px;border-bottom:1px solid #e4e7eb;text-align:left;vertical-align:middle}
th{background:#f4f6f8;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.note{max-width:360px;overflow-wrap:anywhere;font-size:13px;color:#444}
td.name{overflow-wrap:anywhere;max-width:260px}
td.st{white-space:nowrap}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:-1px}
ul.counts{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:8px 18px}
ul.counts b{font-variant-numeric:tabular-nums}
.muted{color:#5a6270}a{color:#1f5fa8}
""".strip()


def render(rows: list[Row], series: dict[str, Series], sparks: dict[str, str] | None = None) -> str:
    """The page text for ``rows`` (published order) and each row's comparable ``series``;
    ``sparks`` maps a name to its already-drawn sparkline (drawn here when missing)."""
    methodology = site.link(HERE, site.METHODOLOGY)
    leaderboard = site.link(HERE, site.LEADERBOARD_MD)
    newest = max((one_line(r.record.get("measuredAt"))[:10] for r in rows if r.record), default="")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:\">",
        "<title>mcp-context-cost: what MCP servers cost in context tokens</title>",
        f"<style>\n{CSS}\n</style>",
        "</head>",
        "<body>",
        "<main>",
        "<h1>What MCP servers cost in context tokens</h1>",
        "<p>Each number is the o200k_base token count of the canonical bytes of a server's "
        "<code>tools/list</code> result: what a client that loads every tool definition pays before a "
        f"single tool is called. How it is made and what it is not: <a href=\"{html.escape(methodology)}\">"
        f"{html.escape(site.METHODOLOGY_LABEL)}</a>. The same table as Markdown and CSV: "
        f"<a href=\"{html.escape(leaderboard)}\">leaderboard</a>.</p>",
        *_counts(rows, newest),
        *_bands(rows),
        *_table(rows, series, sparks or {}),
        *_deferring(rows),
        *readings_html.dashboard_section(rows),
        "</main>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _counts(rows: list[Row], newest: str) -> list[str]:
    items = "".join(f"<li><b>{count}</b> {html.escape(status)}</li>" for status, count in status_counts(rows).items())
    when = f" Newest measurement: {html.escape(newest)}." if newest else ""
    return ['<section aria-labelledby="h-status">', '<h2 id="h-status">Statuses</h2>',
            f'<p class="muted">{len(rows)} catalog entries, each with exactly one status.{when}</p>',
            f'<ul class="counts" id="status-counts">{items}</ul>', "</section>"]


def _band_ranges() -> list[tuple[str, str, str]]:
    out, lower = [], 0
    for upper, colour, label in bands.BANDS:
        text = f"< {num(upper)}" if lower == 0 else (f"≥ {num(lower)}" if upper is None else f"{num(lower)} – {num(upper - 1)}")
        out.append((colour, label, text))
        lower = upper or lower
    return out


def _bands(rows: list[Row]) -> list[str]:
    counted = [r.band[0] for r in rows if r.tokens is not None]
    body = "".join(f'<tr><td><span class="sw" style="background:{HEX[c]}"></span>{html.escape(label)}</td>'
                   f'<td>{html.escape(text)} tokens</td><td class="n">{counted.count(c)}</td></tr>'
                   for c, label, text in _band_ranges())
    return ['<section aria-labelledby="h-bands">', '<h2 id="h-bands">Colour bands</h2>',
            '<table id="bands"><thead><tr><th>Band</th><th>Tokens</th><th class="n">Entries</th></tr></thead>',
            f"<tbody>{body}</tbody></table>", "</section>"]


def _table(rows: list[Row], series: dict[str, Series], sparks: dict[str, str]) -> list[str]:
    head = ("<tr><th class=\"n\">#</th><th>Server</th><th>Status</th><th class=\"n\">Tokens</th>"
            "<th class=\"n\">Tools</th><th>Largest tool</th><th class=\"n\">Session start</th><th>Band</th>"
            "<th>Trend</th><th>Notes</th></tr>")
    body = [_row(r, series.get(r.name), sparks.get(r.name)) for r in rows]
    return ['<section aria-labelledby="h-board">', '<h2 id="h-board">Leaderboard</h2>',
            '<p class="muted">Ranked by tokens, largest first; ties by name. Session start: tool-name list '
            "plus server instructions (deferred-load/v1); ≥ marks a floor where instructions were not "
            "captured. Every other entry follows with its status: failures are findings.</p>",
            f'<table id="leaderboard"><thead>{head}</thead><tbody>', *body, "</tbody></table>", "</section>"]


def _row(r: Row, series: Series | None, spark: str | None) -> str:
    e = html.escape
    link = e(site.link(HERE, site.server_page(r.name)))
    largest = f"{e(one_line(r.largest[0], 80))} ({num(r.largest[1])})" if r.largest else "—"
    colour, label = r.band
    band = f'<span class="sw" style="background:{HEX[colour]}"></span>{e(label)}' if r.tokens is not None else "—"
    if not (series and series.points):
        spark = ""
    else:
        spark = (spark or svg.sparkline(r.name, series)).strip()
    notes = e(one_line("; ".join(r.notes), 240))
    return (f'<tr data-status="{e(r.status)}"><td class="n">{r.rank or ""}</td>'
            f'<td class="name"><a href="{link}">{e(one_line(r.name, 80))}</a></td><td class="st">{e(r.status)}</td>'
            f'<td class="n">{num(r.tokens)}</td><td class="n">{num(r.tool_count)}</td><td class="name">{largest}</td>'
            f'<td class="n">{e(r.session.label()) if r.session else "—"}</td><td class="st">{band}</td>'
            f"<td>{spark}</td><td class=\"note\">{notes}</td></tr>")


def _deferring(rows: list[Row]) -> list[str]:
    costly = [r for r in rows if r.defers_costlier]
    out = ['<section aria-labelledby="h-defer">', '<h2 id="h-defer">Where deferring costs more</h2>']
    if not costly:
        return out + ["<p>No measured entry has a session-start load above its headline number.</p>", "</section>"]
    items = "".join(f'<li><a href="{html.escape(site.link(HERE, site.server_page(r.name)))}">{html.escape(r.name)}</a>: '
                    f"{html.escape(r.session.label())} tokens at session start against {num(r.tokens)} for every "
                    "definition up front</li>" for r in costly)
    return out + [f'<ul id="deferring">{items}</ul>', "</section>"]
