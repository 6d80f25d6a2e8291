"""``docs/index.html``: the dashboard, the ranking first (:func:`render`).

Rules: docs/PAGES.md, "Dashboard, calculator, server pages".
"""

from __future__ import annotations

import html

from harness.core import bands
from harness.db import failure_reason
from harness.pages import dashboard_assets as assets
from harness.pages import readings, site
from harness.pages.board import GROUP_LABELS, Row, machine_note
from harness.pages.text import breakable, embedded_json, num, one_line, shorten
from harness.pages.series import Series, not_measured_since
from harness.util import published

HERE = published.DASHBOARD
REASON_LIMIT = 110
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
       f"script-src {assets.script_hash()}")


def render(rows: list[Row], series: dict[str, Series], sparks: dict[str, str] | None = None) -> str:
    """The page text for ``rows`` (published order) and each row's comparable ``series``
    (``sparks`` is accepted for callers that drew sparklines; the page draws its own)."""
    e = html.escape
    newest = max((one_line(r.record.get("measuredAt"))[:10] for r in rows if r.record), default="")
    data = [_datum(r, series.get(r.name)) for r in rows]
    columns = {"session": any(r.session for r in rows),
               "trend": any(d.get("trend") for d in data)}
    document = {"columns": columns, "context": bands.CONTEXT_WINDOW, "bands": [label for _, _, label in bands.BANDS],
                "groups": GROUP_LABELS, "rows": data}
    link = lambda target: e(site.link(HERE, target))  # noqa: E731
    when = f" Newest measurement {e(newest)}." if newest else ""
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
        '<header class="top"><h1>What MCP servers cost in context tokens</h1>',
        f'<nav><a href="{link(published.CALCULATOR)}">Setup calculator</a> · <a href="#how-to-read">How to read this</a> · '
        f'<a href="{link(published.METHODOLOGY)}">{e(site.METHODOLOGY_LABEL)}</a> · '
        f'<a href="{link(published.REGRESSIONS_MD)}">cost movement</a> · '
        f'<a href="{link(published.LEADERBOARD_MD)}">leaderboard</a> (Markdown, '
        f'<a href="{link(published.LEADERBOARD_CSV)}">CSV</a>)</nav>',
        f'<p class="lede">Tokens a client spends on each server\'s tool definitions before the first call '
        f"(o200k_base, every definition loaded up front). {len(rows)} servers in the catalog.{when}</p></header>",
        '<section id="board" aria-label="Ranking">',
        _controls(),
        '<p id="summary" class="muted" aria-live="polite"></p>',
        *_machine_note(rows),
        '<div id="table-box"><table id="leaderboard"><thead></thead><tbody></tbody></table></div>',
        '<p><button type="button" id="more" hidden></button></p>',
        f'<noscript><p>The ranking is drawn by a small script. The same table without one: '
        f'<a href="{link(published.LEADERBOARD_MD)}">leaderboard (Markdown)</a>, '
        f'<a href="{link(published.LEADERBOARD_CSV)}">CSV</a>.</p></noscript>',
        "</section>",
        *_how_to_read(),
        *_deferring(rows),
        *readings.dashboard_section(rows),
        "</main>",
        f'<script type="application/json" id="rows">{embedded_json(document)}</script>',
        f"<script>{assets.SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _datum(r: Row, series: Series | None) -> dict:
    """One row as the script reads it (short keys: the page carries one per catalog entry)."""
    d: dict = {"name": one_line(r.name, 200), "href": site.link(HERE, published.server_html(r.name)),
               "status": r.status, "group": r.group}
    if r.entry.category:
        d["category"] = one_line(r.entry.category, 80)
    if r.tokens is not None:
        d.update(rank=r.rank, tokens=r.tokens, tools=r.tool_count, band=r.band[1])
        if r.largest:
            d["largest"] = [one_line(r.largest[0], 120), r.largest[1]]
        if r.session:
            d["session"] = [r.session.tokens, r.session.floor]
        tools = [one_line(t.get("name"), 120).lower() for t in r.fields.get("tools") or [] if isinstance(t, dict)]
        if tools:
            d["find"] = " ".join(tools)
        points = series.points if series else ()
        if len(points) >= 2:
            d["trend"] = [p.tokens for p in points]
    else:
        full = "; ".join(r.notes)
        short = shorten(failure_reason.reason(r.record) if r.record else full, REASON_LIMIT)
        if short:
            d["why"] = short
        if one_line(full) and one_line(full) != short:
            d["note"] = one_line(full, 4000)
    if r.record and r.record.get("measuredAt"):
        d["date"] = one_line(r.record.get("measuredAt"))[:10]
    stale = not_measured_since(r.status, series) if series is not None else None
    if stale:
        d["since"] = stale[0]  # a kept record: the machine has not measured it again since that date
    return d


def _machine_note(rows: list[Row]) -> list[str]:
    """The sentence saying a ``not-measured-here`` row is the machine's failure, when a row has that
    status (the script shows it with the "not measured here" group)."""
    note = machine_note(rows)
    return [f'<p id="machine-note" class="muted">{html.escape(note)}.</p>'] if note else []


def _controls() -> str:
    return ('<form id="controls" role="search">'
            '<label class="q"><span>Find a server or tool</span><input type="search" id="filter-text" '
            'placeholder="e.g. github, browser, search_issues" autocomplete="off"></label>'
            '<div class="groups" role="group" aria-label="Which servers" id="filter-group"></div>'
            '<div class="bands" role="group" aria-label="Band" id="filter-band"></div>'
            '<label class="sort"><span>Sort</span><select id="sort-key"></select></label>'
            "</form>")


def _how_to_read() -> list[str]:
    ranges = " ".join(f'<span class="chip {assets.band_class(label)}"><span class="sw"></span>{html.escape(label)}</span> '
                      f"{html.escape(text)}" for label, text in band_ranges())
    return ['<section id="how-to-read" aria-labelledby="h-read">', '<h2 id="h-read">How to read this</h2>',
            "<p>One row per server, largest cost first. <b>Tokens</b> is what loading all of a server's tool "
            f"definitions costs a client before it calls anything; <b>of {bands.CONTEXT_LABEL}</b> is that as a share of "
            f"a {bands.CONTEXT_WINDOW:,}-token context. Fewer is leaner. <b>Session start</b> is what a client that defers "
            "definitions (loads names first) pays instead; ≥ marks a floor where the server's instructions "
            "were not captured. A trend appears once a server has two comparable sweeps.</p>",
            f"<p>Bands: {ranges} tokens.</p>",
            "<p><b>Failed</b> servers did not give a number when launched here: that is a finding about the "
            "server. <b>Not measured here</b> servers could not be run or reached from the measuring machine "
            "(no network to the host, a runtime it lacks, not swept yet): that says nothing about the "
            "server. Each name opens the server's own page.</p>", "</section>"]


def band_ranges() -> list[tuple[str, str]]:
    """``(label, token range)`` of each band (methodology, "Color bands")."""
    out, lower = [], 0
    for upper, _colour, label in bands.BANDS:
        text = f"< {num(upper)}" if lower == 0 else (f"≥ {num(lower)}" if upper is None else f"{num(lower)} – {num(upper - 1)}")
        out.append((label, text))
        lower = upper or lower
    return out


def _deferring(rows: list[Row]) -> list[str]:
    costly = [r for r in rows if r.defers_costlier]
    out = ['<section aria-labelledby="h-defer">', '<h2 id="h-defer">Where deferring costs more</h2>']
    if not costly:
        return out + ["<p>No measured entry has a session-start load above its headline number.</p>", "</section>"]
    items = "".join(f'<li><a href="{html.escape(site.link(HERE, published.server_html(r.name)))}">{breakable(r.name)}</a>: '
                    f"{html.escape(r.session.label())} tokens at session start against {num(r.tokens)} for every "
                    "definition up front</li>" for r in costly if r.session)
    return out + [f'<ul id="deferring">{items}</ul>', "</section>"]
