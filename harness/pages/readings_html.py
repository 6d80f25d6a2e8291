"""The dashboard's "Beside the headline" section (issue #14): one ``<tr>`` per ranked row with at
least one current reading in ``table#beside`` — the Claude, mcp-tokens, resources & prompts and
capability-probe readings (:mod:`harness.pages.readings`). A column no row has a reading for is
left out, and so is a row with no reading: the table shows what there is. Text is escaped with
``html.escape``.
"""

from __future__ import annotations

import html

from harness.pages import readings, site
from harness.pages.readings_md import side_label
from harness.pages.text import num, one_line
from harness.util import published

HERE = published.DASHBOARD
NONE = "—"
# (heading, numeric?) of the reading columns, in order; a row's cells come from _cells.
_HEADS = (("Mapped", True), ("Claude", True), ("Claude ÷ o200k", True), ("mcp-tokens", True),
          ("Resources &amp; prompts", True), ("Capability probe", False))


def dashboard_section(rows: list) -> list[str]:
    """The section's lines for ``rows`` (published order)."""
    claude = readings.claude_range(rows)
    span = (f"{readings.across(claude, 'current', lambda v: f'{v:.2f}×', ' the headline')} (Claude's count)."
            if claude else "No current Claude row.")
    ranked = [(r, _cells(r)) for r in rows if r.rank is not None]
    ranked = [(r, cells) for r, cells in ranked if any(html_ != NONE for _, html_ in cells)]
    keep = [i for i in range(len(_HEADS)) if any(cells[i][1] != NONE for _, cells in ranked)]
    out = ['<section aria-labelledby="h-beside">', '<h2 id="h-beside">Beside the headline</h2>',
           '<p class="muted">Readings versioned on their own, never added to the headline: Claude (tools-delta/v1), '
           "the mcp-tokens cross-check (cli-cross-check/v1), resources and prompts (side-lists/v1), the capability "
           f"probe (capability-probe/v1). A figure shows only while its capture is the published one. {html.escape(span)}</p>"]
    if not ranked:
        return out + ["<p>No ranked server has a current reading.</p>", "</section>"]
    numeric = ' class="n"'
    head = '<tr><th>Server</th><th class="n">Tokens (o200k)</th>' + "".join(
        f'<th{numeric if _HEADS[i][1] else ""}>{_HEADS[i][0]}</th>' for i in keep) + "</tr>"
    body = [_row(r, [cells[i][0] for i in keep]) for r, cells in ranked]
    return out + [f'<table id="beside"><thead>{head}</thead><tbody>', *body, "</tbody></table>", "</section>"]


def _cells(r) -> list[tuple[str, str]]:
    """``(cell HTML, its text)`` per reading column."""
    e = html.escape
    got = readings.of(r)
    c, x, p = got.claude, got.cross, got.probe
    mapped = c.mapped if c else (x.mapped if x else None)
    texts = [(num(mapped), "n"), (num(c.tokens) if c else NONE, "n claude"),
             (f"{c.ratio:.2f}×" if c and c.ratio is not None else NONE, "n"),
             (e(readings.percent(x.percent)) if x else NONE, "n"), (e(side_label(got.side)), "n"),
             (e(readings.probe_cell(p)), "")]
    return [(f'<td class="{cls}">{text}</td>' if cls else f"<td>{text}</td>", text) for text, cls in texts]


def _row(r, cells: list[str]) -> str:
    e = html.escape
    link = e(site.link(HERE, published.server_html(r.name)))
    return (f'<tr data-server="{e(r.name)}"><td class="name"><a href="{link}">{e(one_line(r.name, 80))}</a></td>'
            f'<td class="n">{num(r.tokens)}</td>{"".join(cells)}</tr>')
