"""The job summary (``GITHUB_STEP_SUMMARY``): status, tokens, the verdict, the comparison, the per-tool breakdown.

Rule: docs/ACTION.md, "The gate".
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from harness.action.comparison import Change, Comparison, GateFailure
from harness.audit.suggest import markdown
from harness.core.record import Record
from harness.pages import composition
from harness.pages.composition import Composition
from harness.pages.text import one_line
from harness.util import untrusted

MAX_TOOL_ROWS = 300
MAX_TEXT = 500
_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def _compatibility(record: Record) -> list[str]:
    """The record's compatibility line: which strict clients would reject what the server sends."""
    compat = record.get("compatibility")
    if not isinstance(compat, dict) or not isinstance(compat.get("summary"), str):
        return []
    return [f"**Compatibility with strict clients:** {text(compat['summary'])}", ""]


def text(value: object, limit: int = MAX_TEXT) -> str:
    """``value`` as one line of inline Markdown, cut to ``limit``, controls visible, punctuation escaped."""
    raw = " ".join(str(value).split())
    if len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    return _PUNCT.sub(r"\\\1", untrusted.escape(raw))


def render(record: Record, *, failures: list[GateFailure] | None = None, comparison: Comparison | None = None,
           baseline_error: str | None = None, budget: int | None = None, baseline_label: str | None = None,
           paths: dict[str, str] | None = None, tool_shape: str | None = None,
           baseline_record: Record | None = None) -> str:
    """The Markdown section for ``record``."""
    now = composition.of_record(record)
    lines = [f"## Context cost: {text(record['server'])}", ""]
    lines += _headline(record, budget)
    if failures is not None:
        lines += _verdict(failures)
    if comparison is not None or baseline_error is not None:
        lines += _baseline(comparison, baseline_error, baseline_label,
                           _fields_moved(composition.of_record(baseline_record), now))
    lines += _composition(now) if now is not None else _tools(record)
    lines += _shape(record, tool_shape)
    if record.get("notes"):
        lines += ["**Notes**", ""] + [f"- {text(note)}" for note in record["notes"]] + [""]
    lines += _compatibility(record)
    for label, path in (paths or {}).items():
        lines.append(f"{text(label)}: {text(path)}  ")
    return "\n".join(lines).rstrip() + "\n"


def _headline(record: Record, budget: int | None) -> list[str]:
    tokens, count = record.get("totalTokens"), record.get("toolCount")
    sha = record.get("canonicalSha256")
    row = [text(record["status"]), f"{tokens:,}" if tokens is not None else "—",
           str(count) if count is not None else "—", f"`{sha[:12]}…`" if sha else "—"]
    header = ["status", "tokens (o200k_base)", "tools", "canonical SHA-256"]
    if budget is not None:
        header.append("budget")
        row.append(f"{budget:,}" + (f" ({100 * tokens / budget:.0f}% used)" if tokens is not None and budget else ""))
    return [_row(header), _row(["---"] * len(header)), _row(row), ""]


def _verdict(failures: list[GateFailure]) -> list[str]:
    if not failures:
        return ["**Gate: passed.**", ""]
    return ["**Gate: failed.**", ""] + [f"- **{text(f.title)}**: {text(f.message)}" for f in failures] + [""]


def _fields_moved(before: Composition | None, after: Composition | None) -> dict[tuple[str, int], str]:
    """``{(tool name, n-th of that name): "description +120, …"}`` for tools whose fields moved."""
    if before is None or after is None:
        return {}
    old = _by_occurrence(before)
    moved = {}
    for key, tool in _by_occurrence(after).items():
        if key not in old:
            continue
        parts = [(field, tool.part(field) - old[key].part(field)) for field in composition.FIELDS]
        parts = sorted((p for p in parts if p[1]), key=lambda p: -abs(p[1]))
        if parts:
            moved[key] = ", ".join(f"{composition.LABELS[f]} {d:+,}" for f, d in parts)
    return moved


def _by_occurrence(comp: Composition) -> dict[tuple[str, int], composition.ToolParts]:
    seen: dict[str, int] = {}
    out = {}
    for tool in comp.tools:
        seen[tool.name] = seen.get(tool.name, 0) + 1
        out[(tool.name, seen[tool.name])] = tool
    return out


def _baseline(comparison: Comparison | None, error: str | None, label: str | None,
              moved: dict[tuple[str, int], str] | None = None) -> list[str]:
    lines = ["### Against the baseline" + (f" ({text(label)})" if label else ""), ""]
    if comparison is None:
        return lines + [f"The comparison could not be made: {text(error or 'unknown reason')}", ""]
    c = comparison
    pct = "" if c.percent is None else f" ({c.percent:+.1f}%)"
    lines += [_row(["", "baseline", "now", "delta"]), _row(["---"] * 4),
              _row(["tokens", f"{c.before_tokens:,}", f"{c.after_tokens:,}", f"{c.delta:+,}{pct}"]),
              _row(["tools", str(c.before_tool_count), str(c.after_tool_count),
                    f"{c.after_tool_count - c.before_tool_count:+,}"]), ""]
    if c.same_capture:
        return lines + ["The tool list is byte-identical to the baseline's (same canonical SHA-256).", ""]
    for title, changes in (("Added tools", c.added), ("Removed tools", c.removed),
                           ("Grown tools", c.grown), ("Shrunk tools", c.shrunk)):
        if changes:
            fields = moved if changes is c.grown or changes is c.shrunk else None
            lines += [f"**{title}** ({len(changes)})", ""] + _changes(changes, fields) + [""]
    if not (c.added or c.removed or c.grown or c.shrunk):
        lines += ["No tool was added, removed or changed size; the tool list still differs (e.g. order).", ""]
    return lines


def _changes(changes: list[Change], moved: dict[tuple[str, int], str] | None = None) -> list[str]:
    """A table of changed tools; with ``moved``, a column saying which fields moved."""
    head = ["tool", "baseline", "now", "delta"] + (["what changed"] if moved is not None else [])
    rows = [_row(head), _row(["---"] * len(head))]
    for change in changes[:MAX_TOOL_ROWS]:
        cells = [text(change.name), _n(change.before), _n(change.after), f"{change.delta:+,}"]
        if moved is not None:
            cells.append(text(_moved_for(moved, change.name)))
        rows.append(_row(cells))
    if len(changes) > MAX_TOOL_ROWS:
        rows.append(f"\n… and {len(changes) - MAX_TOOL_ROWS} more")
    return rows


def _moved_for(moved: dict[tuple[str, int], str], name: str) -> str:
    """What moved in the first tool called ``name`` (the comparison names the tool, not its occurrence)."""
    for (tool, _occurrence), what in moved.items():
        if tool == one_line(name, 200):
            return what
    return "—"


def _composition(comp: Composition) -> list[str]:
    """Where the tokens go: per tool (largest first) and per field, summing exactly to the total."""
    totals = comp.field_totals()
    fields = [f for f in composition.FIELDS if totals[f]]
    head = ["tool", "tokens", *(composition.LABELS[f] for f in fields)]
    lines = ["### Where the tokens go", "",
             f"Each of the {comp.total:,} tokens belongs to exactly one part: a field of one tool, or the "
             "punctuation between tools. Parts sum to the total.", "", _row(head), _row(["---"] * len(head))]
    tools = sorted(comp.tools, key=lambda t: -t.tokens)
    for tool in tools[:MAX_TOOL_ROWS]:
        lines.append(_row([text(tool.name), f"{tool.tokens:,}", *(f"{tool.part(f):,}" for f in fields)]))
    if len(tools) > MAX_TOOL_ROWS:
        rest = tools[MAX_TOOL_ROWS:]
        lines.append(_row([f"{len(rest)} more tools", f"{sum(t.tokens for t in rest):,}",
                           *(f"{sum(t.part(f) for t in rest):,}" for f in fields)]))
    lines.append(_row(["punctuation between tools", f"{comp.punctuation:,}", *("" for _ in fields)]))
    lines.append(_row(["**total**", f"**{comp.total:,}**", *(f"{totals[f]:,}" for f in fields)]))
    return lines + [""]


def _tools(record: Record) -> list[str]:
    tools = record.get("tools") or []
    if not tools:
        return []
    lines = ["### Per-tool breakdown", "",
             "Each tool's JSON counted on its own; these do not sum to the total.", "",
             _row(["tool", "tokens", "description", "input schema"]), _row(["---"] * 4)]
    for tool in sorted(tools, key=lambda t: -t["tokens"])[:MAX_TOOL_ROWS]:
        lines.append(_row([text(tool["name"]), f"{tool['tokens']:,}", f"{tool['descriptionTokens']:,}",
                           f"{tool['inputSchemaTokens']:,}"]))
    if len(tools) > MAX_TOOL_ROWS:
        lines.append(f"\n… and {len(tools) - MAX_TOOL_ROWS} more tools (see the record)")
    return lines + [""]


def _shape(record: Record, source: str | None) -> list[str]:
    """Each tool's place in the measured distribution (tool-shape/v1): see :func:`harness.audit.suggest.markdown`."""
    return markdown(record.get("tools") or [], source, text) if record.get("totalTokens") is not None else []


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _n(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def main(argv: list[str] | None = None) -> int:
    """Print the section of each record named in ``argv``; 2 when one cannot be read."""
    paths = sys.argv[1:] if argv is None else argv
    code = 0
    for path in paths:
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
            print(render(record, paths={"record": path}))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"**{text(path)}**: cannot be read as a measurement record: {text(exc)}\n")
            code = 2
    return code


if __name__ == "__main__":
    sys.exit(main())
