"""``docs/servers/<name>.md``: one page per catalog entry: :func:`render`, :func:`cost_movement`.

It leads with the cost and ends with what a checker needs (``server_provenance``; docs/METHODOLOGY.md, "Reproduce it").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.core.bands import CONTEXT_LABEL, CONTEXT_WINDOW
from harness.db import failure_reason
from harness.db.history import HistoryRow
from harness.pages import composition, readings, regressions, site, tool_shape
from harness.pages.board import FAILED, MACHINE, Row
from harness.pages.composition import Composition
from harness.pages.text import as_int, md, num, one_line
from harness.pages.regressions import Movement
from harness.pages.series import Series, not_measured_since
from harness.pages.server_provenance import FIELD_LIMIT, NAME_LIMIT, discover_section, last_confirmed, provenance
from harness.util import published

CHEAPER = 5  # cheaper servers of the same category listed on a page


@dataclass
class Standing:
    """What a page needs to know about the other rows: how many are ranked, the ranked rows of each
    category (cheapest first), and each row's composition (computed once, shared with the HTML)."""

    ranked: int
    by_category: dict[str, list[Row]]
    p90_description: int | None = None  # tool-shape/v1: the 90th percentile of description tokens
    compositions: dict[str, Composition | None] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: list[Row], shape: dict | None = None) -> Standing:
        """The standing of ``rows``; ``shape``: the tool-shape document of their records, when built already."""
        by_category: dict[str, list[Row]] = {}
        for r in rows:
            if r.rank is not None and r.entry.category:
                by_category.setdefault(r.entry.category, []).append(r)
        for peers in by_category.values():
            peers.sort(key=lambda r: (r.tokens, r.name))
        if shape is None:
            shape = tool_shape.build({r.name: r.record for r in rows if r.record})
        descriptions = shape["metrics"]["descriptionTokens"]
        return cls(sum(1 for r in rows if r.rank is not None), by_category,
                   descriptions[tool_shape.ADVICE_PERCENTILE] if descriptions else None)

    def composition(self, row: Row) -> Composition | None:
        if row.name not in self.compositions:
            self.compositions[row.name] = composition.of_record(row.record) if row.tokens is not None else None
        return self.compositions[row.name]

    def cheaper(self, row: Row) -> list[Row]:
        peers = self.by_category.get(row.entry.category or "", [])
        if row.tokens is None:
            return peers[:CHEAPER]
        # peers are sorted cheapest first: the cheaper ones are a prefix
        return [r for r in peers[:CHEAPER] if r.tokens is not None and r.tokens < row.tokens]


def render(row: Row, series: Series, standing: Standing | None = None, movement: Movement | None = None) -> str:
    """The page text for ``row``, its comparable history ``series``, its place among the other rows
    (``standing``; a page alone when ``None``) and its cost ``movement``."""
    standing = standing or Standing.of([row])
    here = published.server_page(row.name)
    out = [f"# {md(row.name)}", "", _headline(row, standing), *_capture_lines(row, series), "",
           f"[dashboard]({site.link(here, published.DASHBOARD)}) · "
           f"[setup calculator]({site.link(here, published.CALCULATOR)}) · "
           f"[leaderboard]({site.link(here, published.LEADERBOARD_MD)}) · "
           f"[{site.METHODOLOGY_LABEL}]({site.link(here, published.METHODOLOGY)})", ""]
    out += _install(row)
    out += composition_section(row, standing.composition(row))
    out += _shape(row, standing)
    out += _session(row)
    out += _cheaper(row, standing, here)
    out += readings.server_section(row)
    out += discover_section(row)
    out += _over_time(row, series, here)
    if movement is not None:
        out += [cost_movement(movement).rstrip("\n"), ""]
    out += provenance(row, series)
    return "\n".join(out).rstrip("\n") + "\n"


def _headline(row: Row, standing: Standing) -> str:
    if row.tokens is None:
        why = _why(row)
        if row.group == MACHINE:
            return (f"**Not measured here** — status `{row.status}`: the measuring machine could not run or reach "
                    f"this server{': ' + why if why else ''}. That says nothing about the server itself.")
        kind = "Failed" if row.group == FAILED else "No number"
        return f"**{kind}** — status `{row.status}`{': ' + why if why else ''}. No token count."
    _colour, label = row.band
    dynamic = " The listed set changes between launches (dynamic)." if row.status == "dynamic" else ""
    return (f"**{num(row.tokens)} tokens** of tool definitions — band **{label}**, **#{row.rank} of "
            f"{standing.ranked}** ranked servers, **{share(row.tokens)}** of a {CONTEXT_LABEL} context, {num(row.tool_count)} "
            f"tool{'' if row.tool_count == 1 else 's'}. A client that loads every definition pays this before the "
            f"first call (o200k\\_base).{dynamic}")


def share(tokens: int) -> str:
    """``tokens`` as a percentage of a ``CONTEXT_WINDOW`` context, one decimal (``<0.1%`` rather than ``0.0%``)."""
    value = 100 * tokens / CONTEXT_WINDOW
    return "<0.1%" if 0 < value < 0.05 else f"{value:.1f}%"


def _why(row: Row) -> str:
    text = failure_reason.reason(row.record) if row.record else "; ".join(row.notes)
    return md(text, 300)


def _install(row: Row) -> list[str]:
    """What the server is and how to run it, from the catalog entry."""
    e = row.entry
    out = ["## What it is and how to install it", ""]
    about = []
    if e.category:
        about.append(f"- Category: {md(e.category, NAME_LIMIT)}")
    if e.package:
        # Plain text, not a code span: a code span shows md()'s escapes (\_, &lt;) as typed.
        about.append(f"- Package: {md(e.package, NAME_LIMIT)}")
    if e.repo:
        about.append(f"- Repository: <{md(e.repo, FIELD_LIMIT)}>" if _plain_url(e.repo) else f"- Repository: {md(e.repo, FIELD_LIMIT)}")
    server = " ".join(one_line(x, NAME_LIMIT) for x in (row.fields.get("serverName"), row.fields.get("serverVersion")) if x)
    if server:
        about.append(f"- Names itself: {md(server)}")
    if about:
        out += [*about, ""]
    if e.command:
        out += ["Run it as the catalog does (add it to your client's MCP configuration):", "", "```sh", one_line(e.command, FIELD_LIMIT), "```", ""]
    elif e.url:
        out += [f"A remote server: {md(e.url, FIELD_LIMIT)} (Streamable HTTP).", ""]
    names = row.fields.get("envVarNames") or []
    if names:
        out += [f"Environment variables it reads: {md(', '.join(map(str, names)), FIELD_LIMIT)}.", ""]
    if e.notes:
        out += [f"Catalog note: {md(e.notes, FIELD_LIMIT)}", ""]
    return out


def _plain_url(text: object) -> bool:
    return isinstance(text, str) and re.fullmatch(r"https://[A-Za-z0-9._~/%+-]+", text) is not None


def composition_section(row: Row, comp: Composition | None) -> list[str]:
    """"Where the tokens go": one row per tool (largest first), one column per field, the array's
    punctuation, and a total that equals the headline."""
    if row.tokens is None:
        return []
    out = ["## Where the tokens go", ""]
    if not row.tool_count:
        return out + ["The server listed no tools.", ""]
    if comp is None:
        return out + ["No breakdown: the record's capture does not re-derive its number here.", ""]
    totals = comp.field_totals()
    fields = [f for f in composition.FIELDS if totals[f]]
    spread = ", ".join(f"{composition.LABELS[f]} {num(totals[f])} ({100 * totals[f] / comp.total:.1f}%)"
                       for f in sorted(fields, key=lambda f: -totals[f]))
    out += [f"Each of the {num(comp.total)} tokens of the capture belongs to exactly one part: the field of the "
            f"tool its text is in, or the punctuation between tools. Across all tools: {spread}"
            f"{f', punctuation {num(comp.punctuation)}' if comp.punctuation else ''}.", ""]
    out += ["| Tool | Tokens | " + " | ".join(composition.LABELS[f].capitalize() for f in fields) + " |",
            "|---|---:|" + "---:|" * len(fields)]
    for tool in sorted(comp.tools, key=lambda t: -t.tokens):
        out.append(f"| {md(tool.name, NAME_LIMIT) or '—'} | {num(tool.tokens)} | "
                   + " | ".join(num(tool.part(f)) for f in fields) + " |")
    blank = " | ".join("" for _ in fields)
    out.append(f"| punctuation between tools | {num(comp.punctuation)} | {blank} |")
    out.append(f"| **Total** | **{num(comp.total)}** | " + " | ".join(num(totals[f]) for f in fields) + " |")
    return out + [""]


def _shape(row: Row, standing: Standing) -> list[str]:
    """Shape advice (tool-shape/v1): the tools whose description is at or above the 90th
    percentile of every description measured here, largest first — or that nothing is."""
    tools = [t for t in row.fields.get("tools") or [] if isinstance(t, dict)]
    if row.tokens is None or not tools or standing.p90_description is None:
        return []
    p90 = standing.p90_description
    long = sorted((t for t in tools if (as_int(t.get("descriptionTokens")) or 0) >= p90),
                  key=lambda t: -(as_int(t.get("descriptionTokens")) or 0))
    out = ["## Shape advice", ""]
    comp = standing.composition(row)
    if comp is not None and comp.total:
        field_, tokens = max(comp.field_totals().items(), key=lambda item: item[1])
        out += [f"The largest part of the cost is {composition.LABELS[field_]}: {num(tokens)} of {num(comp.total)} "
                f"tokens ({100 * tokens / comp.total:.0f}%).", ""]
    if not long:
        return out + [f"Nothing unusual: no tool's description reaches the {tool_shape.ADVICE_PERCENTILE}th percentile of the descriptions "
                      f"measured here ({num(p90)} tokens).", ""]
    names = ", ".join(f"{md(t.get('name'), NAME_LIMIT)} ({num(as_int(t.get('descriptionTokens')))})" for t in long[:10])
    more = f" and {len(long) - 10} more" if len(long) > 10 else ""
    return out + [f"{len(long)} of {len(tools)} tool descriptions are at or above the {tool_shape.ADVICE_PERCENTILE}th percentile of the "
                  f"descriptions measured here ({num(p90)} tokens): {names}{more}. A description is read on every "
                  "request that carries the tool: saying less there costs less everywhere.", ""]


def _cheaper(row: Row, standing: Standing, here: str) -> list[str]:
    category = row.entry.category
    if not category:
        return []
    peers = [r for r in standing.cheaper(row) if r.name != row.name]
    title = f"## Cheaper servers in {md(category, NAME_LIMIT)}" if row.tokens is not None else \
        f"## Measured servers in {md(category, NAME_LIMIT)}"
    if not peers:
        return [title, "", "None: no ranked server of this category costs less." if row.tokens is not None
                else "None ranked yet.", ""]
    lines = []
    for r in peers:
        less = f", {num(row.tokens - r.tokens)} fewer" if row.tokens is not None and r.tokens is not None else ""
        lines.append(f"- [{md(r.name, NAME_LIMIT)}]({site.link(here, published.server_page(r.name))}): "
                     f"{num(r.tokens)} tokens{less}, {num(r.tool_count)} tool{'' if r.tool_count == 1 else 's'}")
    return [title, "", *lines, ""]


# --- when the capture was taken and last confirmed; unconfirmed single launches --------

def _capture_lines(row: Row, series: Series) -> list[str]:
    """"Captured …, last confirmed …" under the headline, and whether a single-launch capture is unconfirmed."""
    r = row.record
    if r is None:
        return []
    captured = md(str(r.get("measuredAt") or "")[:10], NAME_LIMIT) or "an unrecorded date"
    confirmed = last_confirmed(r, series)
    out = ["", f"Captured {captured}, last confirmed {confirmed}." if confirmed else
           f"Captured {captured}; not confirmed by a sweep since."]
    stale = not_measured_since(r.get("status"), series)
    if stale is not None:
        since, sweeps = stale
        out += ["", f"**Not measured here since {since}** ({sweeps} sweep(s)): the measuring machine failed, not "
                "the server (see \"Over time\"), so what is shown is the last record the server itself gave, "
                f"captured {captured}."]
    if row.tokens is not None and r.get("confirmed") is False:
        out += ["", "**Unconfirmed:** this number comes from a single launch — the confirming second launch "
                "failed or was not made — so it is not known to be stable (see the notes)."]
    return out


def _session(row: Row) -> list[str]:
    s = row.session
    if s is None:
        return []
    out = ["## Session-start load", "", f"**{s.label()} tokens** (deferred-load/v1): "
           f"{num(s.names)} for the tool-name list + "]
    if s.floor:
        out[-1] += "instructions not captured in this record, so this is a floor, not a figure."
    else:
        out[-1] += f"{num(s.instructions)} for the server's instructions."
    if row.defers_costlier:
        out += ["", f"Deferring costs more here: {s.label()} tokens at session start against "
                f"{num(row.tokens)} for every definition loaded up front."]
    return out + [""]


def _over_time(row: Row, series: Series, here: str) -> list[str]:
    out = ["## Over time", ""]
    if not series.rows and not series.left_out:
        return out + ["No sweep of this entry is in `history.csv` yet.", ""]
    out += [f"![{md(row.name)}: context cost over time]({site.link(here, published.trend(row.name))})", ""]
    out.append(_series_sentence(series))
    out += ["", "| Date | Tokens | Tools | Status | Isolation |", "|---|---:|---:|---|---|"]
    for h in reversed(series.rows):
        out.append(f"| {h.date} | {num(h.tokens)} | {num(h.toolCount)} | {h.status} | {_iso(h)} |")
    return out + [""]


def _iso(h: HistoryRow) -> str:
    return h.isolation or "not recorded"


def _series_sentence(series: Series) -> str:
    if not series.rows:
        return "No comparable sweep."
    where = f"under {series.isolation} isolation" if series.isolation else "none with its isolation on record"
    text = f"Comparable series: {len(series.rows)} sweep(s), {where}, starting {series.starts}."
    if series.left_out:
        kinds = sorted({h.isolation_label for h in series.left_out})
        first, last = series.left_out[0].date, series.left_out[-1].date
        span = first if first == last else f"{first} to {last}"
        text += (f" {len(series.left_out)} earlier row(s) ({span}, measured under {', '.join(kinds)}) are "
                 "left out: numbers taken under different isolation are not comparable.")
    if series.unrecorded:
        text += (f" {series.unrecorded} row(s) have no isolation on record; they still plot, marked "
                 "\"not recorded\" (hollow points on the chart).")
    return text


def cost_movement(m: Movement) -> str:
    """The page's "Cost movement" section for movement ``m``."""
    here = published.server_page(m.server)
    out = ["## Cost movement", "",
           f"Method {regressions.METHOD}; every server: [cost movement]({site.link(here, published.REGRESSIONS_MD)}).", ""]
    if m.state == regressions.NONE:
        return "\n".join(out + ["No comparable measurement: nothing to compare.", ""])
    if m.state == regressions.UNCHANGED:
        latest = m.latest
        return "\n".join(out + [f"No movement in the comparable series: {num(latest.tokens if latest else None)} tokens, "
                                f"{num(latest.toolCount if latest else None)} tools, held since {regressions.held(m)}.", ""])
    called = ("It clears both thresholds" if m.emphasised else "It is below the emphasis thresholds")
    before, after = m.window
    out += [f"Most recent movement: **{regressions.change(m, ' tokens')}**, {num(before.tokens)} → "
            f"{num(after.tokens)} tokens and {num(before.toolCount)} → {num(after.toolCount)} tools, between "
            f"the sweeps of {before.date} and {after.date}. Mechanism (from the totals): {m.mechanism}. "
            f"The new cost has held since {regressions.held(m)}. {called} "
            f"({regressions.thresholds()}).", ""]
    if m.breakdown is None:
        return "\n".join(out + [f"Per tool: {m.unavailable}.", ""])
    out += ["| Tool | Change | Before | After | Delta | Description Δ | Input schema Δ |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for t in m.breakdown.tools:
        out.append(f"| {md(t.name, NAME_LIMIT) or '—'} | {t.change} | {num(t.before and t.before[0])} | "
                   f"{num(t.after and t.after[0])} | {t.delta:+,} | {t.part(1):+,} | {t.part(2):+,} |")
    out.append(f"| *unattributed* (belongs to no single tool) | | | | {m.breakdown.unattributed:+,} | | |")
    return "\n".join(out + ["", "Per-tool numbers are each tool's own JSON counted alone; the unattributed "
                                "remainder is the movement of the total minus their sum, published rather than "
                                "spread over the tools.", ""])
