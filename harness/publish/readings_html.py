"""The dashboard's "Beside the headline" section (issue #14): one ``<tr>`` per ranked row in
``table#beside`` with the current Claude, mcp-tokens, resources & prompts and capability-probe
readings (:mod:`harness.publish.readings`; a stale or missing one shows "—"). Text is escaped with
``html.escape``.
"""

from __future__ import annotations

import html

from harness.publish import readings, site
from harness.publish.readings_md import side_label
from harness.publish.text import num, one_line

HERE = site.DASHBOARD


def dashboard_section(rows: list) -> list[str]:
    """The section's lines for ``rows`` (published order)."""
    claude = readings.claude_range(rows)
    span = (f"{readings.across(claude, 'current', lambda v: f'{v:.2f}×', ' the headline')} (Claude's count)."
            if claude else "No current Claude row.")
    head = ('<tr><th>Server</th><th class="n">Tokens (o200k)</th><th class="n">Mapped</th><th class="n">Claude</th>'
            '<th class="n">Claude ÷ o200k</th><th class="n">mcp-tokens</th><th class="n">Resources &amp; prompts</th>'
            "<th>Capability probe</th></tr>")
    body = [_row(r) for r in rows if r.rank is not None]
    return ['<section aria-labelledby="h-beside">', '<h2 id="h-beside">Beside the headline</h2>',
            '<p class="muted">Readings versioned on their own, never added to the headline: Claude (tools-delta/v1), '
            "the mcp-tokens cross-check (cli-cross-check/v1), resources and prompts (side-lists/v1), the capability "
            f"probe (capability-probe/v1). A figure shows only while its capture is the published one. {html.escape(span)}</p>",
            f'<table id="beside"><thead>{head}</thead><tbody>', *body, "</tbody></table>", "</section>"]


def _row(r) -> str:
    e = html.escape
    got = readings.of(r)
    c, x, p = got.claude, got.cross, got.probe
    mapped = c.mapped if c else (x.mapped if x else None)
    ratio = f"{c.ratio:.2f}×" if c and c.ratio is not None else "—"
    link = e(site.link(HERE, site.server_html(r.name)))
    return (f'<tr data-server="{e(r.name)}"><td class="name"><a href="{link}">{e(one_line(r.name, 80))}</a></td>'
            f'<td class="n">{num(r.tokens)}</td><td class="n">{num(mapped)}</td>'
            f'<td class="n claude">{num(c.tokens) if c else "—"}</td><td class="n">{ratio}</td>'
            f'<td class="n">{e(readings.percent(x.percent)) if x else "—"}</td>'
            f'<td class="n">{e(side_label(got.side))}</td><td>{e(readings.probe_cell(p))}</td></tr>')
