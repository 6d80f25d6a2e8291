"""Re-derive a record's numbers from its own capture: ``rederive``, ``refusal``
(docs/METHODOLOGY.md, 'Reproduce it').
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

from harness.core import side_figures
from harness.core.canonical import stringify
from harness.core.counting import count_tools
from harness.core.record import NUMBERED
from harness.core.tokenizer import Uncountable, count
from harness.util.bounded import MAX_RECORD_TOOLS

CHECKED = ("totalTokens", "canonicalSha256", "toolCount", "canonicalLength")
TOOL_FIELDS = ("name", "tokens", "descriptionTokens", "inputSchemaTokens")
DISCOVER_CHECKED = ("totalTokens", "toolCount", "canonicalSha256")


class NotARecord(ValueError):
    """The document is not a record with a capture to re-derive from."""


@dataclass(frozen=True)
class Comparison:
    """Published and derived value per checked field; ``mismatches`` names those that differ."""

    published: dict
    derived: dict
    mismatches: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatches


def rederive(record: object) -> Comparison:
    """Compare ``record``'s totals, tool rows, ``discover`` and ``sideLists`` with its captures.

    NotARecord without ``totalTokens`` or a ``rawToolsCapture`` array.
    """
    if not isinstance(record, dict) or "totalTokens" not in record:
        raise NotARecord("not a measurement record (no totalTokens field)")
    capture = record.get("rawToolsCapture")
    if not isinstance(capture, list):
        status = record.get("status", "unknown")
        raise NotARecord(f"record has no rawToolsCapture array to re-derive from (status: {status})")
    _bounded(capture, "rawToolsCapture")
    derived_all = count_tools(capture).to_json()
    fields = [f for f in CHECKED if f in record]
    published = {f: _as_int(record[f]) for f in fields}
    derived = {f: derived_all[f] for f in fields}
    for more_published, more_derived in (_tool_rows(record.get("tools"), derived_all["tools"]),
                                          _discover(record.get("discover")),
                                          side_figures.rederive(record.get("sideLists"))):
        published, derived, fields = published | more_published, derived | more_derived, fields + list(more_published)
    mismatches = tuple(f for f in fields if published[f] != derived[f])
    return Comparison(published, derived, mismatches)


def _bounded(tools: list, where: str) -> None:
    """Refuse more tools than a record may hold, before counting."""
    if len(tools) > MAX_RECORD_TOOLS:
        raise NotARecord(f"{where} holds {len(tools):,} tools, more than the {MAX_RECORD_TOOLS:,} a record may hold")


def _tool_rows(rows: object, counted: list[dict]) -> tuple[dict, dict]:
    """``(published, derived)`` for the tool rows that differ from the capture's."""
    if rows is None:
        return {}, {}
    if not isinstance(rows, list) or len(rows) != len(counted):
        return ({"tools.length": len(rows) if isinstance(rows, list) else type(rows).__name__},
                {"tools.length": len(counted)})
    published: dict = {}
    derived: dict = {}
    for i, (row, again) in enumerate(zip(rows, counted)):
        row = row if isinstance(row, dict) else {}
        # The record publishes a name that is not a string as its JSON text.
        again = again | {"name": again["name"] if isinstance(again["name"], str) else stringify(again["name"])}
        for field in TOOL_FIELDS:
            if _as_int(row.get(field)) != again[field]:
                published[f"tools[{i}].{field}"] = _as_int(row.get(field))
                derived[f"tools[{i}].{field}"] = again[field]
    return published, derived


def _discover(figure: object) -> tuple[dict, dict]:
    """``(published, derived)`` for the ``discover`` figure."""
    if not isinstance(figure, dict):
        return {}, {}
    capture = figure.get("rawToolsCapture")
    if not isinstance(capture, list):
        return {"discover.rawToolsCapture": type(capture).__name__}, {"discover.rawToolsCapture": "list"}
    _bounded(capture, "discover.rawToolsCapture")
    again = count_tools(capture).to_json()
    return ({f"discover.{f}": _as_int(figure.get(f)) for f in DISCOVER_CHECKED},
            {f"discover.{f}": again[f] for f in DISCOVER_CHECKED})


def _as_int(value: object) -> Any:
    # Records are parsed with JSON.parse semantics, so integers arrive as floats.
    return int(value) if isinstance(value, float) and value.is_integer() else value



def refusal(record: dict, where: str) -> str | None:
    """One line naming ``where`` and every number that does not re-derive; ``None`` when all do.

    Asked by every path that publishes a record it did not compute.
    """
    if not isinstance(record, dict):
        return None
    if record.get("status") not in NUMBERED:
        if not isinstance(record.get("discover"), dict):
            return None
        try:  # a status without a number may still publish the separate discover figure
            published, derived = _discover(record["discover"])
        except NotARecord as exc:
            return f"{where}: refused: {exc}"
        except (Uncountable, TypeError) as exc:
            return f"{where}: refused: discover.rawToolsCapture cannot be counted ({exc})"
        comparison = Comparison(published, derived, tuple(f for f in published if published[f] != derived[f]))
        return _refusal_line(comparison, where)
    try:
        comparison = rederive(record)
        if isinstance(record.get("serverInstructions"), str):  # counted too where it is published
            count(record["serverInstructions"])
    except NotARecord as exc:
        return f"{where}: refused: {exc}"
    except (Uncountable, TypeError) as exc:  # TypeError: a capture stringify rejects
        return f"{where}: refused: rawToolsCapture or serverInstructions cannot be counted ({exc})"
    return _refusal_line(comparison, where)


SHOWN_MISMATCHES = 5  # a forged list of 20,000 rows is named by its first few


def _refusal_line(comparison: Comparison, where: str) -> str | None:
    if comparison.ok:
        return None
    fields = ", ".join(f"{f} is {_shown(comparison.published[f])} but rawToolsCapture re-derives "
                       f"{_shown(comparison.derived[f])}" for f in comparison.mismatches[:SHOWN_MISMATCHES])
    more = len(comparison.mismatches) - SHOWN_MISMATCHES
    return f"{where}: refused: {fields}" + (f" and {more:,} more" if more > 0 else "")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
