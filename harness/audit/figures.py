"""From entries and measurements to a report's figures: statuses, costs, totals (a floor when a number is missing),
heaviest tools and trim plans. Rule: docs/AUDIT.md, "The report".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.audit.identity import identity
from harness.audit.measuring import Cost, Outcome, cost
from harness.audit.model import BUILTIN, EXTENSION, Entry

DISABLED, MALFORMED, UNEVALUATED, NOT_MEASURABLE = "disabled", "malformed", "unevaluated", "not-measurable"
NOT_APPROVED = "not-approved"
# Tool filters each client's file can express (for the trim plan).
TOOL_FILTER = {"gemini-cli": "excludeTools", "kiro": "disabledTools", "codex-cli": "disabled_tools",
               "goose": "available_tools"}


@dataclass
class Row:
    """One entry with its status, cost (``None`` without a number), identity and outcome."""

    entry: Entry
    status: str
    cost: Cost | None = None
    key: str | None = None
    outcome: Outcome | None = None

    @property
    def counted(self) -> bool:
        """Whether the row belongs in a total at all (a disabled or unapproved entry does not)."""
        return self.status not in (DISABLED, NOT_APPROVED)


def row_for(entry: Entry, outcomes: dict[str, Outcome]) -> Row:
    """The ``Row`` for ``entry`` given every identity's outcome."""
    if entry.disabled:
        return Row(entry, DISABLED)
    if entry.blocked:
        return Row(entry, NOT_APPROVED)
    if entry.problems:
        return Row(entry, MALFORMED)
    if entry.transport in (BUILTIN, EXTENSION):
        return Row(entry, NOT_MEASURABLE)
    if not entry.launchable:
        return Row(entry, UNEVALUATED)
    key = identity(entry)
    outcome = outcomes.get(key)
    if outcome is None:
        return Row(entry, "not-yet-run", key=key)
    return Row(entry, outcome.status, cost(entry, outcome), key, outcome)


def total(rows: list[Row], context: int, unknown: bool = False) -> dict:
    """The sum over counted rows; a floor (``≥``) when a row has no number or ``unknown`` (never an exact 0)."""
    counted = [r for r in rows if r.counted]
    tokens = sum(r.cost.tokens for r in counted if r.cost)
    unmeasured = [r.entry.name for r in counted if r.cost is None]
    floor = bool(unmeasured) or unknown
    return {"tokens": tokens, "floor": floor, "share": share(tokens, context),
            "display": figure(tokens, floor), "unmeasured": unmeasured}


def share(tokens: int, context: int) -> float:
    """``tokens`` as a fraction of a ``context``-token window (6 decimals)."""
    return round(tokens / context, 6) if context else 0.0


def figure(tokens: int, floor: bool) -> str:
    """``1,234`` or ``≥ 1,234`` — a total with an unmeasured server is a floor, never a figure."""
    return f"≥ {tokens:,}" if floor else f"{tokens:,}"


def heaviest_tools(rows: list[Row], limit: int = 10) -> list[dict]:
    """The ``limit`` heaviest tools across ``rows`` (tokens of each tool's own JSON)."""
    tools: list[dict[str, Any]] = [{"server": r.entry.name, "tool": str(t.get("name")), "tokens": int(t.get("tokens", 0)),
              "descriptionTokens": int(t.get("descriptionTokens", 0)),
              "inputSchemaTokens": int(t.get("inputSchemaTokens", 0))}
             for r in rows if r.counted and r.cost for t in r.cost.per_tool if isinstance(t, dict)]
    return sorted(tools, key=lambda t: (-t["tokens"], t["server"], t["tool"]))[:limit]


def trim_plan(rows: list[Row], context: int, limit: int = 5) -> list[dict]:
    """Steps that lower a file's total, largest first: whole servers, then the heaviest filterable tools (approximate)."""
    servers = sorted(((r.entry.name, r.cost.tokens) for r in rows if r.counted and r.cost),
                     key=lambda s: (-s[1], s[0]))
    steps = [{"action": "disable-server", "server": name, "saves": tokens, "savesShare": share(tokens, context),
              "approximate": False, "how": f"remove or disable {name!r} in this file"}
             for name, tokens in servers[:limit]]
    for tool in heaviest_tools(rows, limit):
        row = next(r for r in rows if r.entry.name == tool["server"])
        key = TOOL_FILTER.get(row.entry.client)
        how = (f"add {tool['tool']!r} to {key} of {tool['server']!r}" if key else
               f"switch off {tool['tool']!r} of {tool['server']!r} in the client (this file format has no tool filter)")
        steps.append({"action": "drop-tool", "server": tool["server"], "tool": tool["tool"], "saves": tool["tokens"],
                      "savesShare": share(tool["tokens"], context), "approximate": True, "how": how})
    return steps
