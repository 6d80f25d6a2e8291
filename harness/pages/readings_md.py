"""Markdown for the readings beside the headline (issue #14): the leaderboard's "Beside the
headline" section — Claude, mcp-tokens, resources & prompts and capability-probe columns — and the
server page's section. Every figure shown is a current one (:mod:`harness.pages.readings`);
a stale or missing reading prints "—" (leaderboard) or says it is not on record (page). Recorded
text goes through ``mdescape.md``.
"""

from __future__ import annotations

from harness.pages import readings, site
from harness.pages.mdescape import md
from harness.pages.text import num
from harness.util import published

NAME_LIMIT = 80
HERE = published.LEADERBOARD_MD
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
        got = readings.of(r)
        c, x = got.claude, got.cross
        mapped = c.mapped if c else (x.mapped if x else None)
        link = f"[{md(r.name, NAME_LIMIT)}]({site.link(HERE, published.server_page(r.name))})"
        out.append(f"| {link} | {num(r.tokens)} | {num(mapped)} | {num(c.tokens) if c else '—'} | "
                   f"{_ratio(c)} | {_share(c)} | {readings.percent(x.percent) if x else '—'} | "
                   f"{side_label(got.side)} | {readings.probe_cell(got.probe)} |")
    return out + [""]


def _legend(rows: list) -> list[str]:
    claude, cross = readings.claude_range(rows), readings.cross_range(rows)
    models = sorted({readings.of(r).claude.model for r in rows if readings.of(r).claude})
    span = (f" {readings.across(claude, 'current', lambda v: f'{v:.2f}×', ' the headline')} "
            f"(model {', '.join(md(m) for m in models)})." if claude else " No current row.")
    residual = f" {readings.across(cross, 'printed', readings.percent)}." if cross else " No printed row."
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
    got = readings.of(row)
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
            f"against our {num(x.mapped)} for the same projection: {readings.percent(x.percent)} "
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
