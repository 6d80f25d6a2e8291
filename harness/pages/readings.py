"""The readings beside the headline per row (Claude, mcp-tokens, capability probe, side figures) and
their Markdown, CSV and HTML: :func:`attach`, :func:`of`, :func:`leaderboard_section`,
:func:`server_section`, :func:`dashboard_section`, :func:`csv_cells`.

Rules: docs/PAGES.md, "Readings beside the headline".
"""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass
from pathlib import Path

from harness.core import side_figures
from harness.core.projection import selection_share
from harness.readings import store
from harness.core.record import NUMBERED
from harness.pages import site
from harness.pages.board import Row
from harness.pages.text import as_int, md, num, one_line
from harness.pages.published_records import RecordError
from harness.util import published

@dataclass(frozen=True)
class Claude:
    tokens: int  # Anthropic's count of what the tools add to a request
    mapped: int  # o200k of the projection
    headline: int  # o200k of the whole capture
    model: str
    date: str

    @property
    def ratio(self) -> float | None:
        return self.tokens / self.headline if self.headline else None

    @property
    def share(self) -> float:
        """Field-selection share: how much of the headline the projection drops (0–1)."""
        return selection_share(self.headline, self.mapped)


@dataclass(frozen=True)
class Cross:
    cli_tokens: int  # the CLI's tools total
    mapped: int  # ours, same projection
    release: str
    date: str

    @property
    def percent(self) -> float:
        """The CLI's count against ours of the same projection, in percent (0 when both are 0)."""
        return 0.0 if self.mapped == 0 else (self.cli_tokens - self.mapped) * 100.0 / self.mapped


@dataclass(frozen=True)
class Probe:
    gained: tuple[tuple[str, int], ...]
    lost: tuple[tuple[str, int], ...]
    changed: tuple[tuple[str, int], ...]
    delta: int
    date: str


@dataclass(frozen=True)
class Side:
    tokens: int
    floor: bool
    parts: tuple[tuple[str, int | None, int | None, str | None], ...]  # (list, items, tokens, error)


@dataclass(frozen=True)
class Readings:
    claude: Claude | None = None
    cross: Cross | None = None
    probe: Probe | None = None
    side: Side | None = None


def attach(rows: list, root: Path) -> list:
    """``rows`` with ``readings`` filled from the run files under ``root`` and each record.
    Raises :class:`harness.pages.published_records.RecordError` naming an unusable run file (so ``regen``
    reports it like a bad record and writes nothing)."""
    try:
        files = {kind: {r["server"]: r for r in (store.read(root, kind) or {}).get("rows", [])}
                 for kind in store.FILES}
    except store.ReadingsError as exc:
        raise RecordError([str(exc)]) from None
    return [dataclasses.replace(row, readings=for_row(row, files)) for row in rows]


def for_row(row: Row, files: dict[str, dict]) -> Readings:
    """The current readings of one row (``files``: kind → server → run-file row)."""
    record = row.fields
    if record.get("status") not in NUMBERED:
        return Readings()
    sha = record.get("canonicalSha256")
    return Readings(claude=_claude(files["divergence"].get(row.name), sha),
                    cross=_cross(files["cross-check"].get(row.name), sha),
                    probe=_probe(files["capability-probe"].get(row.name), sha),
                    side=_side(record.get("sideLists")))


def _claude(d: dict | None, sha) -> Claude | None:
    if not d or d.get("canonicalSha256") != sha or as_int(d.get("claudeTokens")) is None:
        return None
    return Claude(_count(d["claudeTokens"]), _count(d["mappedTokens"]), _count(d["totalTokens"]), d["model"], d["countedAt"])


def _cross(c: dict | None, sha) -> Cross | None:
    if not c or c.get("canonicalSha256") != sha or c.get("status") != "compared":
        return None
    cli = c["cli"]
    if sorted(cli["toolNames"]) != sorted(c["toolNames"]):  # like for like, or silence
        return None
    return Cross(_count(cli["toolsTokens"]), _count(c["mappedTokens"]), c["release"], c["checkedAt"])


def _probe(p: dict | None, sha) -> Probe | None:
    if not p or p["withoutCapabilities"].get("canonicalSha256") != sha:
        return None
    tools = lambda key: tuple((t["name"], _count(t["tokens"])) for t in p[key])  # noqa: E731
    return Probe(tools("gained"), tools("lost"), tools("changed"), _count(p["deltaTokens"]), p["probedAt"])


def _count(value: object) -> int:
    """A count of a run file row (its schema requires one, checked when the file is read)."""
    count = as_int(value)
    assert count is not None, f"not a count: {value!r}"
    return count


def _side(side: object) -> Side | None:
    summed = side_figures.total(side)
    if summed is None or not isinstance(side, dict):
        return None
    parts = []
    for key, *_ in side_figures.LISTS:
        entry = side.get(key)
        if isinstance(entry, dict):
            parts.append((key, as_int(entry.get("count")), as_int(entry.get("totalTokens")), entry.get("error")))
    return Side(summed[0], summed[1], tuple(parts))


def probe_cell(probe: Probe | None) -> str:
    """The capability probe's cell (``floor: 2 more tools, +197 tokens``); ``"—"`` without a current row."""
    if probe is None:
        return "—"
    gained = len(probe.gained)
    text = f"floor: {gained} more tool{'' if gained == 1 else 's'}"
    text += f", {len(probe.lost)} lost" if probe.lost else ""
    text += f", {len(probe.changed)} changed" if probe.changed else ""
    return f"{text}, {probe.delta:+,} tokens"


def of(row) -> Readings:
    """A row's readings (empty when none were attached)."""
    return getattr(row, "readings", None) or Readings()


def claude_range(rows: list) -> tuple[float, float, int] | None:
    """``(lowest, highest, servers)`` of Claude ÷ o200k over the current Claude rows."""
    ratios = [c.ratio for c in (of(row).claude for row in rows) if c and c.ratio is not None]
    return (min(ratios), max(ratios), len(ratios)) if ratios else None


def cross_range(rows: list) -> tuple[float, float, int] | None:
    """``(lowest, highest, servers)`` of the printed cross-check percentages."""
    values = [x.percent for x in (of(row).cross for row in rows) if x]
    return (min(values), max(values), len(values)) if values else None


def across(span: tuple[float, float, int], kind: str, show, unit: str = "") -> str:
    """A range from :func:`claude_range` / :func:`cross_range` as a sentence without its full stop."""
    low, high, rows = span
    if rows == 1 or low == high:
        where = f"On the {rows} {kind} row{'' if rows == 1 else 's'}"
        return f"{where} it is {show(low)}{unit}" if unit else f"{where}: {show(low)}"
    where = f"Across the {rows} {kind} rows"
    if unit:
        return f"{where} it ranges from {show(low)} to {show(high)}{unit}"
    return f"{where}: {show(low)} to {show(high)}"


def percent(value: float) -> str:
    """``+0.12%`` / ``-1.50%`` / ``0.00%``."""
    text = f"{value:+.2f}%"
    return "0.00%" if text in ("+0.00%", "-0.00%") else text


CSV_COLUMNS = ("claudeTokens", "mappedTokens", "claudeModel", "mcpTokens", "mcpTokensPercent",
           "resourcesPromptsTokens", "resourcesPromptsIsFloor", "capabilityFloorTokens")


def csv_cells(row) -> dict[str, str]:
    """``{column: cell}`` for one row (empty strings where nothing current is on record)."""
    got = of(row)
    c, x, s, p = got.claude, got.cross, got.side, got.probe
    mapped = c.mapped if c else (x.mapped if x else None)
    return {
        "claudeTokens": _n(c.tokens if c else None),
        "mappedTokens": _n(mapped),
        "claudeModel": c.model if c else "",
        "mcpTokens": _n(x.cli_tokens if x else None),
        "mcpTokensPercent": f"{x.percent:.2f}" if x else "",
        "resourcesPromptsTokens": _n(s.tokens if s else None),
        "resourcesPromptsIsFloor": ("true" if s.floor else "false") if s else "",
        "capabilityFloorTokens": _n(p.delta if p else None),
    }


def _n(value: int | None) -> str:
    return "" if value is None else str(int(value))


NAME_LIMIT = 80
SIDE_LABELS = {"resources": "resources/list", "resourceTemplates": "resources/templates/list", "prompts": "prompts/list"}


def leaderboard_section(rows: list) -> list[str]:
    """The leaderboard's "Beside the headline" section for ``rows`` (published order)."""
    ranked = [r for r in rows if r.rank is not None]
    out = ["## Beside the headline", "",
           "Readings published beside the o200k headline, each versioned on its own; none is added to "
           "the headline or moves it, a badge or a canonical hash. A figure prints only while the capture "
           "it was computed from is the published one.", "", *_legend(rows), ""]
    if not ranked:
        return out + ["No entry has a measurement yet.", ""]
    out += ["| Server | Tokens (o200k) | Mapped | Claude | Claude ÷ o200k | Field selection | mcp-tokens | "
            "Resources & prompts | Capability probe |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in ranked:
        got = of(r)
        c, x = got.claude, got.cross
        mapped = c.mapped if c else (x.mapped if x else None)
        link = f"[{md(r.name, NAME_LIMIT)}]({site.link(published.LEADERBOARD_MD, published.server_page(r.name))})"
        out.append(f"| {link} | {num(r.tokens)} | {num(mapped)} | {num(c.tokens) if c else '—'} | "
                   f"{_ratio(c)} | {_share(c)} | {percent(x.percent) if x else '—'} | "
                   f"{side_label(got.side)} | {probe_cell(got.probe)} |")
    return out + [""]


def _legend(rows: list) -> list[str]:
    claude, cross = claude_range(rows), cross_range(rows)
    models = sorted({c.model for c in (of(r).claude for r in rows) if c})
    span = (f" {across(claude, 'current', lambda v: f'{v:.2f}×', ' the headline')} "
            f"(model {', '.join(md(m) for m in models)})." if claude else " No current row.")
    residual = f" {across(cross, 'printed', percent)}." if cross else " No printed row."
    return [
        "- **Claude** (tools-delta/v1): tokens the server's tools add to an Anthropic `count_tokens` request "
        "— the capture projected onto `name`, `description`, `input_schema`, minus the same request with no "
        "tools. Mapped: the o200k count of that projection; field selection: the share of the "
        f"headline the projection drops.{span}",
        "- **mcp-tokens** (cli-cross-check/v1): sd2k/mcp-tokens' tiktoken count (`--model gpt-4o`) against "
        "ours of the same projection; printed only when the CLI saw the same tool names as our capture."
        f"{residual}",
        "- **Resources & prompts** (side-lists/v1): o200k tokens of the canonical `resources/list`, "
        "`resources/templates/list` and `prompts/list` results of a server that declares them, counted "
        "apart and added; never part of the headline. `≥` marks a list that did not answer.",
        "- **Capability probe** (capability-probe/v1): a client declaring roots and elicitation sees more "
        "tools here, so the headline is a floor.",
    ]


def _ratio(c) -> str:
    return f"{c.ratio:.2f}×" if c and c.ratio is not None else "—"


def _share(c) -> str:
    return f"{c.share * 100:.1f}%" if c else "—"


def side_label(side) -> str:
    """``"563"`` / ``"≥ 89"`` / ``"—"`` for a row's side figures."""
    if side is None:
        return "—"
    return ("≥ " if side.floor else "") + num(side.tokens)


def server_section(row) -> list[str]:
    """The server page's "Beside the headline" section (empty for a row without a number)."""
    if row.tokens is None:
        return []
    got = of(row)
    out = ["## Beside the headline", "", "Separate readings, each versioned on its own; none is part of the "
           "headline number above.", ""]
    out += _claude_lines(got.claude) + _cross_lines(got.cross) + _side_lines(got.side) + _probe_lines(got.probe)
    return out + [""]


def _claude_lines(c) -> list[str]:
    if c is None:
        return ["- **Claude** (tools-delta/v1): no count on record for this capture."]
    return [f"- **Claude** (tools-delta/v1): **{num(c.tokens)} tokens** added to an Anthropic request "
            f"(model {md(c.model)}, counted {md(c.date)}) — {_ratio(c)} the o200k headline of "
            f"{num(c.headline)}. The name/description/input\\_schema projection counts {num(c.mapped)} on "
            f"o200k: field selection drops {_share(c)} of the headline."]


def _cross_lines(x) -> list[str]:
    if x is None:
        return ["- **mcp-tokens** (cli-cross-check/v1): no like-for-like comparison on record for this capture."]
    return [f"- **mcp-tokens** (cli-cross-check/v1): sd2k/mcp-tokens {md(x.release)} counts {num(x.cli_tokens)} "
            f"against our {num(x.mapped)} for the same projection: {percent(x.percent)} "
            f"(checked {md(x.date)})."]


def _side_lines(side) -> list[str]:
    if side is None:
        return ["- **Resources & prompts** (side-lists/v1): none declared, or not listed in this record."]
    parts = []
    for key, items, tokens, error in side.parts:
        label = SIDE_LABELS[key]
        parts.append(f"`{label}` {num(tokens)} tokens ({num(items)} item(s))" if error is None
                     else f"`{label}` no figure ({md(error, 200)})")
    return [f"- **Resources & prompts** (side-lists/v1): **{side_label(side)} tokens**, never added to the "
            f"headline: {'; '.join(parts)}. Re-derived from the record by `verify`."]


def _probe_lines(probe) -> list[str]:
    if probe is None:
        return []
    gained = ", ".join(f"{md(n, NAME_LIMIT)} ({num(t)})" for n, t in probe.gained) or "none"
    text = (f"- **Capability probe** (capability-probe/v1, {md(probe.date)}): the headline is a **floor** — a "
            f"client declaring roots and elicitation sees {probe.delta:+,} tokens; tools gained: {gained}")
    if probe.lost:
        text += "; lost: " + ", ".join(md(n, NAME_LIMIT) for n, _ in probe.lost)
    if probe.changed:
        text += "; changed: " + ", ".join(md(n, NAME_LIMIT) for n, _ in probe.changed)
    return [text + "."]


NONE = "—"
# (heading, numeric?) of the reading columns, in order; a row's cells come from _cells.
_HEADS = (("Mapped", True), ("Claude", True), ("Claude ÷ o200k", True), ("mcp-tokens", True),
          ("Resources &amp; prompts", True), ("Capability probe", False))


def dashboard_section(rows: list) -> list[str]:
    """The section's lines for ``rows`` (published order)."""
    claude = claude_range(rows)
    span = (f"{across(claude, 'current', lambda v: f'{v:.2f}×', ' the headline')} (Claude's count)."
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
    got = of(r)
    c, x, p = got.claude, got.cross, got.probe
    mapped = c.mapped if c else (x.mapped if x else None)
    texts = [(num(mapped), "n"), (num(c.tokens) if c else NONE, "n claude"),
             (f"{c.ratio:.2f}×" if c and c.ratio is not None else NONE, "n"),
             (e(percent(x.percent)) if x else NONE, "n"), (e(side_label(got.side)), "n"),
             (e(probe_cell(p)), "")]
    return [(f'<td class="{cls}">{text}</td>' if cls else f"<td>{text}</td>", text) for text, cls in texts]


def _row(r, cells: list[str]) -> str:
    e = html.escape
    link = e(site.link(published.DASHBOARD, published.server_html(r.name)))
    return (f'<tr data-server="{e(r.name)}"><td class="name"><a href="{link}">{e(one_line(r.name, 80))}</a></td>'
            f'<td class="n">{num(r.tokens)}</td>{"".join(cells)}</tr>')
