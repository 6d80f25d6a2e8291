"""The leaderboard CSV's columns for the readings beside the headline (issue #14), appended after
the existing ones: only current readings fill a cell (:mod:`harness.pages.readings`), so a stale
row is an empty cell exactly as on every other page.

``claudeTokens`` (tools-delta/v1), ``mappedTokens`` (o200k of the name/description/input_schema
projection), ``claudeModel``; ``mcpTokens`` (the CLI's count) and ``mcpTokensPercent`` (its
difference from ``mappedTokens``, two decimals, cli-cross-check/v1); ``resourcesPromptsTokens`` and
``resourcesPromptsIsFloor`` (side-lists/v1); ``capabilityFloorTokens`` (capability-probe/v1: what a
client declaring roots and elicitation sees on top of the headline).
"""

from __future__ import annotations

from harness.pages import readings

COLUMNS = ("claudeTokens", "mappedTokens", "claudeModel", "mcpTokens", "mcpTokensPercent",
           "resourcesPromptsTokens", "resourcesPromptsIsFloor", "capabilityFloorTokens")


def cells(row) -> dict[str, str]:
    """``{column: cell}`` for one row (empty strings where nothing current is on record)."""
    got = readings.of(row)
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
