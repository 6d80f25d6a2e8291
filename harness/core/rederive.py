"""Re-derive a record's numbers from its own capture (methodology, "Reproduce it").

totalTokens, canonicalSha256, toolCount (and canonicalLength when present) are recomputed from
``rawToolsCapture`` alone and compared field by field; so is every resources/prompts side figure
of ``sideLists`` from its own ``rawCapture`` (fields ``sideLists.<list>.<field>``; issue #14).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core import side_figures
from harness.core.counting import count_tools
from harness.core.tokenizer import Uncountable, count

CHECKED = ("totalTokens", "canonicalSha256", "toolCount", "canonicalLength")


class NotARecord(ValueError):
    """The document is not a measurement record with a capture to re-derive from."""


@dataclass(frozen=True)
class Comparison:
    """``published`` and ``derived`` values per checked field; ``mismatches`` lists differing fields."""

    published: dict
    derived: dict
    mismatches: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatches


def rederive(record: object) -> Comparison:
    """Compare a parsed record with numbers derived from its ``rawToolsCapture``.

    Raises ``NotARecord`` when ``record`` is not an object with an array ``rawToolsCapture`` and a
    ``totalTokens`` field (e.g. a failure record, which publishes no number).
    """
    if not isinstance(record, dict) or "totalTokens" not in record:
        raise NotARecord("not a measurement record (no totalTokens field)")
    capture = record.get("rawToolsCapture")
    if not isinstance(capture, list):
        status = record.get("status", "unknown")
        raise NotARecord(f"record has no rawToolsCapture array to re-derive from (status: {status})")
    derived_all = count_tools(capture).to_json()
    fields = [f for f in CHECKED if f in record]
    published = {f: _as_int(record[f]) for f in fields}
    derived = {f: derived_all[f] for f in fields}
    side_published, side_derived = side_figures.rederive(record.get("sideLists"))
    published, derived, fields = published | side_published, derived | side_derived, fields + list(side_published)
    mismatches = tuple(f for f in fields if published[f] != derived[f])
    return Comparison(published, derived, mismatches)


def _as_int(value: object) -> object:
    # Records are parsed with JSON.parse semantics, so integers arrive as floats.
    return int(value) if isinstance(value, float) and value.is_integer() else value


NUMBERED = ("measured", "dynamic")


def refusal(record: dict, where: str) -> str | None:
    """One line naming ``where`` and every field of a ``measured``/``dynamic`` record that does
    not re-derive from its own capture (or why it, or the published ``serverInstructions``, cannot
    be counted); ``None`` when all do, or
    when the record publishes no number. What every path publishing a record it did not compute
    itself asks before it publishes."""
    if not isinstance(record, dict) or record.get("status") not in NUMBERED:
        return None
    try:
        comparison = rederive(record)
        if isinstance(record.get("serverInstructions"), str):  # counted too where it is published
            count(record["serverInstructions"])
    except NotARecord as exc:
        return f"{where}: refused: {exc}"
    except (Uncountable, TypeError) as exc:  # TypeError: a capture stringify rejects
        return f"{where}: refused: rawToolsCapture or serverInstructions cannot be counted ({exc})"
    if comparison.ok:
        return None
    fields = ", ".join(f"{f} is {_shown(comparison.published[f])} but rawToolsCapture re-derives "
                       f"{_shown(comparison.derived[f])}" for f in comparison.mismatches)
    return f"{where}: refused: {fields}"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
