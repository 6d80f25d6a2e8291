"""``--suggest``: each tool's percentile in the published tool shape, and the descriptions that draw advice (tool-shape/v1).

Rule: docs/AUDIT.md, "Against what is published"; docs/METHODOLOGY.md, "Tool shape".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from harness.audit import published_reader
from harness.core.record import ToolRow
from harness.pages.tool_shape import ADVICE_PERCENTILE as FIRES_AT, METHOD, METRICS, percentile_of
from harness.util.published import TOOL_SHAPE
from harness.util.untrusted import escape

MEDIAN = 50
NOTHING_UNUSUAL = (f"Nothing unusual: no tool description is at or above the {FIRES_AT}th percentile of the measured "
                   "distribution.")
APPROXIMATE = ("approximate: component counts sum only approximately across token boundaries, and a rewritten "
               "description tokenizes as itself")


@dataclass(frozen=True)
class Placement:
    """One tool's three counts (tokens) and the percentile each sits at (``None``: below p0)."""

    name: str
    counts: tuple[int, int, int]  # tokens, descriptionTokens, inputSchemaTokens
    percentiles: tuple[int | None, int | None, int | None]


@dataclass(frozen=True)
class Suggestion:
    """A description at or above p90, and the approximate tokens it would recover (description − median)."""

    name: str
    description: int
    percentile: int
    median: int

    @property
    def recovery(self) -> int:
        return self.description - self.median


class NoBaseline(ValueError):
    """The baseline has no measured tools to place anything against."""


def load_shape(source: str | Path | None = None, root: Path | None = None) -> dict:
    """The tool-shape baseline at ``source``, by default the checkout's else the published one. Raises
    ``published_reader.Unavailable``."""
    return published_reader.read(source or published_reader.default_source(TOOL_SHAPE, root), "tool-shape baseline", "tool-shape")


def load_usable(source: str | Path) -> dict:
    """:func:`load_shape`, refusing (``Unavailable``) a baseline with no measured tools."""
    shape = load_shape(source)
    if any(shape["metrics"][m] is None for m in METRICS):
        raise published_reader.Unavailable("tool-shape baseline", str(source), "it holds no measured tools to compare against")
    return shape


def _counts(tool: object) -> tuple[int, int, int] | None:
    values = [tool.get(m) for m in METRICS] if isinstance(tool, Mapping) else []
    counts = [int(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
              and float(v).is_integer()]
    return (counts[0], counts[1], counts[2]) if len(counts) == len(values) == 3 else None


def place(shape: dict[str, Any], tools: Sequence[Mapping[str, Any]]) -> list[Placement]:
    """A placement for every tool with three whole counts, in order. Raises :class:`NoBaseline` on empty tables."""
    tables = [shape["metrics"][m] for m in METRICS]
    if any(t is None for t in tables):
        raise NoBaseline("the tool-shape baseline holds no measured tools to compare against")
    out = []
    for tool in tools:
        counts = _counts(tool)
        if counts is not None:
            tokens, description, schema = (percentile_of(t, v) for t, v in zip(tables, counts))
            out.append(Placement(str(tool.get("name")), counts, (tokens, description, schema)))
    return out


def fires(points: list[int], description: int) -> bool:
    """The rule: at or above p90, and above the median."""
    return description >= points[FIRES_AT] and description > points[MEDIAN]


def suggest(shape: dict[str, Any], tools: Sequence[Mapping[str, Any]]) -> list[Suggestion]:
    """Suggestions for the descriptions that fire, largest recovery first (ties: name)."""
    points = shape["metrics"]["descriptionTokens"]
    found = [Suggestion(p.name, p.counts[1], p.percentiles[1] or 0, points[MEDIAN])  # fired: at or above p90
             for p in place(shape, tools) if fires(points, p.counts[1])]
    return sorted(found, key=lambda s: (-s.recovery, s.name))


def percentile_label(p: int | None) -> str:
    return "below p0" if p is None else f"p{p}"


def sentence(s: Suggestion, quote: Callable[[str], str] = escape) -> str:
    """One line of advice; the tool name goes through ``quote`` (default: the terminal escape)."""
    return (f"{quote(s.name)}: description {s.description:,} tokens, at p{s.percentile} of measured descriptions; "
            f"trimming it to the median ({s.median:,}) would recover ≈{s.recovery:,} tokens ({APPROXIMATE})")


def report(shape: dict, tools: list[dict]) -> list[str]:
    """Plain-text lines: one per suggestion, or :data:`NOTHING_UNUSUAL`. Raises :class:`NoBaseline`."""
    found = suggest(shape, tools)
    return [sentence(s) for s in found] if found else [NOTHING_UNUSUAL]


def markdown(tools: Sequence[Mapping[str, Any]], source: str | Path | None, quote: Callable[[str], str], limit: int = 300) -> list[str]:
    """A Markdown section placing ``tools`` in the baseline, then the suggestions; ``[]`` for no tools."""
    if not tools:
        return []
    lines = ["### Tool shape", "", "Percentile of each count among every tool measured by mcp-context-cost "
             "(tool-shape/v1, nearest rank). Only descriptions draw advice: a schema is what the tool can do.", ""]
    try:
        shape = load_shape(source)
        placed, found = place(shape, tools), suggest(shape, tools)
    except (published_reader.Unavailable, NoBaseline) as exc:
        return lines + [f"The tool-shape baseline could not be used: {quote(str(exc))}", ""]
    lines += table(placed, quote, limit)
    advice = [f"- {sentence(s, quote)}" for s in found[:limit]] or [NOTHING_UNUSUAL]
    return lines + [""] + advice + [""]


class Subject(NamedTuple):
    """One distinct measured server to place, with its names, identity, configs and per-tool counts."""

    names: list[str]
    identity: str
    paths: list[str]
    tools: list[ToolRow]


def section(looked: published_reader.Lookup, subjects: list[Subject]) -> dict:
    """The report's ``suggest`` section: per server the placements and suggestions, or the named ``problem``."""
    out: dict[str, Any] = {"method": METHOD, "source": looked.source, "problem": looked.problem, "baseline": None,
                           "servers": []}
    shape = looked.document
    if shape is None:
        return out
    points = shape["metrics"]["descriptionTokens"]
    out["baseline"] = {"servers": shape["servers"], "tools": shape["tools"],
                       "medianDescriptionTokens": points[MEDIAN], "p90DescriptionTokens": points[FIRES_AT]}
    out["servers"] = [_server(shape, s) for s in subjects]
    return out


def _server(shape: dict, subject: Subject) -> dict:
    found = suggest(shape, subject.tools)
    tools = [{"name": p.name, **dict(zip(METRICS, p.counts)), "percentiles": dict(zip(METRICS, p.percentiles))}
             for p in place(shape, subject.tools)]
    return {"names": list(subject.names), "identity": subject.identity, "configs": list(subject.paths),
            "tools": tools, "nothingUnusual": not found,
            "suggestions": [{"tool": s.name, "descriptionTokens": s.description, "percentile": s.percentile,
                             "medianTokens": s.median, "recoveryTokens": s.recovery, "approximate": True}
                            for s in found]}


def row_lines(row: dict, quote: Callable[[str], str] = escape) -> list[str]:
    """One :func:`sentence` per suggestion of a report row, or :data:`NOTHING_UNUSUAL`."""
    found = [Suggestion(s["tool"], s["descriptionTokens"], s["percentile"], s["medianTokens"])
             for s in row["suggestions"]]
    return [sentence(s, quote) for s in found] or [NOTHING_UNUSUAL]


def table(placed: list[Placement], quote: Callable[[str], str], limit: int) -> list[str]:
    """A Markdown table of ``placed`` tools, largest first, at most ``limit`` rows."""
    lines = ["| tool | tokens | description | input schema |", "| --- | --- | --- | --- |"]
    for p in sorted(placed, key=lambda p: -p.counts[0])[:limit]:
        cells = [quote(p.name)] + [f"{c:,} {'below p0' if q is None else f'at p{q}'}"
                                   for c, q in zip(p.counts, p.percentiles)]
        lines.append("| " + " | ".join(cells) + " |")
    if len(placed) > limit:
        lines.append(f"\n… and {len(placed) - limit} more tools")
    return lines


def placements(row: dict) -> list[Placement]:
    """The :class:`Placement` of every tool of a report row."""
    return [Placement(t["name"], tuple(t[m] for m in METRICS), tuple(t["percentiles"][m] for m in METRICS))
            for t in row["tools"]]


def tally(section: dict) -> str:
    """One sentence saying what the placement found (for the gate that records the check was made)."""
    rows, base = section["servers"], section["baseline"]
    fired = sum(len(r["suggestions"]) for r in rows)
    found = (f"{fired} description(s) at or above p90 ({base['p90DescriptionTokens']:,} tokens)" if fired
             else NOTHING_UNUSUAL)
    return (f"placed {sum(len(r['tools']) for r in rows)} tool(s) of {len(rows)} server(s) among {base['tools']:,} "
            f"measured tools in the tool-shape baseline at {section['source']}: {found}")
