"""The job summary: Markdown for ``GITHUB_STEP_SUMMARY``.

One section per measured server: a table of status, tokens (o200k_base) and tool count; the gate's
verdict; against a baseline, the delta and which tools were added, removed, grew or shrank (by how
many per-tool tokens); then the per-tool breakdown (tokens, description tokens, input-schema
tokens) with each count's percentile among every tool measured (tool-shape/v1: descriptions at or above
p90 draw a suggestion, or "Nothing unusual" is said) and the record's notes.

Everything a server chose (tool names, notes) is escaped so that it reads as text — no table
break, no link, no HTML, and no control or bidi character or lone surrogate (those become visible
escapes through ``harness.util.untrusted``, so writing the summary never fails). Long tables are
cut at ``MAX_TOOL_ROWS`` rows with a line saying so
(GitHub keeps at most 1 MiB of summary per step).

Also a command: ``python -m harness.action.summary RECORD.json...`` prints the section of each
record (exit 2 when one cannot be read) — the catalog PR workflow uses it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from harness.action.baseline import Comparison, ToolChange
from harness.action.gate import GateFailure
from harness.util import untrusted

MAX_TOOL_ROWS = 300
MAX_TEXT = 500
_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def _compatibility(record: dict) -> list[str]:
    """The record's compatibility line: which strict clients would reject what the server sends."""
    compat = record.get("compatibility")
    if not isinstance(compat, dict) or not isinstance(compat.get("summary"), str):
        return []
    return [f"**Compatibility with strict clients:** {text(compat['summary'])}", ""]


def text(value: object, limit: int = MAX_TEXT) -> str:
    """``value`` as inline Markdown text: one line, at most ``limit`` characters of the original,
    control characters as visible escapes, punctuation backslash-escaped."""
    raw = " ".join(str(value).split())
    if len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    return _PUNCT.sub(r"\\\1", untrusted.escape(raw))


def render(record: dict, *, failures: list[GateFailure] | None = None, comparison: Comparison | None = None,
           baseline_error: str | None = None, budget: int | None = None, baseline_label: str | None = None,
           paths: dict[str, str] | None = None, tool_shape: str | None = None) -> str:
    """The Markdown section for ``record``. ``failures`` is the gate's verdict (``None``: no gate
    ran); ``paths`` maps labels to file paths shown at the end; ``tool_shape`` is where the
    tool-shape baseline is read (path or URL; default: this checkout's, else the published one)."""
    lines = [f"## Context cost: {text(record['server'])}", ""]
    lines += _headline(record, budget)
    if failures is not None:
        lines += _verdict(failures)
    if comparison is not None or baseline_error is not None:
        lines += _baseline(comparison, baseline_error, baseline_label)
    lines += _tools(record)
    lines += _shape(record, tool_shape)
    if record.get("notes"):
        lines += ["**Notes**", ""] + [f"- {text(note)}" for note in record["notes"]] + [""]
    lines += _compatibility(record)
    for label, path in (paths or {}).items():
        lines.append(f"{text(label)}: {text(path)}  ")
    return "\n".join(lines).rstrip() + "\n"


def _headline(record: dict, budget: int | None) -> list[str]:
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


def _baseline(comparison: Comparison | None, error: str | None, label: str | None) -> list[str]:
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
            lines += [f"**{title}** ({len(changes)})", ""] + _changes(changes) + [""]
    if not (c.added or c.removed or c.grown or c.shrunk):
        lines += ["No tool was added, removed or changed size; the tool list still differs (e.g. order).", ""]
    return lines


def _changes(changes: list[ToolChange]) -> list[str]:
    rows = [_row(["tool", "baseline", "now", "delta"]), _row(["---"] * 4)]
    for change in changes[:MAX_TOOL_ROWS]:
        rows.append(_row([text(change.name), _n(change.before), _n(change.after), f"{change.delta:+,}"]))
    if len(changes) > MAX_TOOL_ROWS:
        rows.append(f"\n… and {len(changes) - MAX_TOOL_ROWS} more")
    return rows


def _tools(record: dict) -> list[str]:
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


def _shape(record: dict, source: str | None) -> list[str]:
    """Each tool's place in the measured distribution (tool-shape/v1, issue #13): see
    :func:`harness.audit.suggest.markdown`."""
    from harness.audit.suggest import markdown

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
