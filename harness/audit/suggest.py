"""``--suggest``: place each of a server's tools in the measured distribution and say which tool
descriptions are unusually expensive (method tool-shape/v1; methodology, "Tool shape"; issue #13).
Used by ``audit --suggest`` and the Action's job summary.

Placement: for each tool's whole-tool, description and input-schema tokens, the percentile it sits
at in ``results/tool-shape.json`` — the largest ``p`` whose nearest-rank point is at or below it
(:func:`harness.publish.tool_shape.percentile_of`; ``None`` below p0).

Advice: only descriptions. A schema is functional surface — trimming it changes what the tool can
do — so it never draws advice; a description is prose, and trimming it changes only what every
request pays. A description earns a suggestion when it is at or above p90 (``tokens ≥ points[90]``)
and above the median (a degenerate distribution whose p90 equals its median recovers nothing).
The suggestion names the exact percentile it fired at and the recovery — description minus the
measured median — marked approximate: component counts sum only approximately across token
boundaries, and a rewritten description tokenizes as itself. When nothing fires, the report says
:data:`NOTHING_UNUSUAL` in those words; no advice is invented to have some.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.audit import published
from harness.publish.tool_shape import METRICS, percentile_of
from harness.util.untrusted import escape

SHAPE = "results/tool-shape.json"
FIRES_AT = 90
MEDIAN = 50
NOTHING_UNUSUAL = ("Nothing unusual: no tool description is at or above the 90th percentile of the measured "
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
    """A description at or above p90: ``percentile`` it fired at, the measured ``median``, and the
    approximate ``recovery`` (description minus median), all in tokens."""

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
    """The tool-shape baseline at ``source`` (path or URL); by default ``root``'s (or this
    checkout's) ``results/tool-shape.json``, else the published raw URL. Raises
    ``published.Unavailable``."""
    return published.read(source or published.default_source(SHAPE, root), "tool-shape baseline", "tool-shape")


def _counts(tool: dict) -> tuple[int, int, int] | None:
    values = tuple(tool.get(m) for m in METRICS) if isinstance(tool, dict) else ()
    if len(values) != 3 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                                    and float(v).is_integer() for v in values):
        return None
    return tuple(int(v) for v in values)


def place(shape: dict, tools: list[dict]) -> list[Placement]:
    """A placement for every tool with three whole counts (a record's per-tool diagnostics), in
    order. Raises :class:`NoBaseline` when the baseline's tables are empty."""
    tables = [shape["metrics"][m] for m in METRICS]
    if any(t is None for t in tables):
        raise NoBaseline("the tool-shape baseline holds no measured tools to compare against")
    out = []
    for tool in tools:
        counts = _counts(tool)
        if counts is not None:
            out.append(Placement(str(tool.get("name")), counts,
                                 tuple(percentile_of(t, v) for t, v in zip(tables, counts))))
    return out


def fires(points: list[int], description: int) -> bool:
    """The rule: at or above p90, and above the median."""
    return description >= points[FIRES_AT] and description > points[MEDIAN]


def suggest(shape: dict, tools: list[dict]) -> list[Suggestion]:
    """Suggestions for the descriptions that fire, largest recovery first (ties: name)."""
    points = shape["metrics"]["descriptionTokens"]
    found = [Suggestion(p.name, p.counts[1], p.percentiles[1], points[MEDIAN])
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


def markdown(tools: list[dict], source: str | Path | None, quote: Callable[[str], str], limit: int = 300) -> list[str]:
    """A Markdown section (the Action's job summary) placing each of ``tools`` — a record's
    per-tool diagnostics — in the baseline read from ``source`` (default as :func:`load_shape`),
    largest first, at most ``limit`` rows; then the suggestions, or :data:`NOTHING_UNUSUAL`.
    ``quote`` makes a tool name inert Markdown. A baseline that cannot be read or is empty is said
    so in the section, never skipped. ``[]`` for no tools."""
    if not tools:
        return []
    lines = ["### Tool shape", "", "Percentile of each count among every tool measured by mcp-context-cost "
             "(tool-shape/v1, nearest rank). Only descriptions draw advice: a schema is what the tool can do.", ""]
    try:
        shape = load_shape(source)
        placed, found = place(shape, tools), suggest(shape, tools)
    except (published.Unavailable, NoBaseline) as exc:
        return lines + [f"The tool-shape baseline could not be used: {quote(str(exc))}", ""]
    lines += ["| tool | tokens | description | input schema |", "| --- | --- | --- | --- |"]
    for p in sorted(placed, key=lambda p: -p.counts[0])[:limit]:
        cells = [quote(p.name)] + [f"{c:,} {'below p0' if q is None else f'at p{q}'}"
                                   for c, q in zip(p.counts, p.percentiles)]
        lines.append("| " + " | ".join(cells) + " |")
    if len(placed) > limit:
        lines.append(f"\n… and {len(placed) - limit} more tools")
    advice = [f"- {sentence(s, quote)}" for s in found[:limit]] or [NOTHING_UNUSUAL]
    return lines + [""] + advice + [""]
