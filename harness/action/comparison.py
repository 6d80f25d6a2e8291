"""Two measurement records compared, and the gate on the result.

Public: ``load``, ``compare``, ``evaluate``, ``tool_deltas``. Rules: docs/ACTION.md, "The gate".
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, cast

from harness.action.inputs import Inputs
from harness.core import canonical, tokenizer
from harness.core.record import NUMBERED, Record
from harness.core.rederive import refusal
from harness.util import bounded, schemas

NAMED_FIELDS = ("description", "inputSchema", "outputSchema", "annotations", "title")


class BaselineError(ValueError):
    """The comparison cannot be made; the message says why, naming the file."""


@dataclass(frozen=True)
class Change:
    """One tool's or field's tokens before and after (``None`` on the side where it is absent)."""

    name: str
    before: int | None
    after: int | None

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


@dataclass
class Comparison:
    """Totals and per-tool changes; ``percent`` is ``None`` over a baseline of 0 tokens."""

    before_tokens: int
    after_tokens: int
    before_tool_count: int
    after_tool_count: int
    added: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    grown: list[Change] = field(default_factory=list)
    shrunk: list[Change] = field(default_factory=list)
    same_capture: bool = False

    @property
    def delta(self) -> int:
        return self.after_tokens - self.before_tokens

    @property
    def percent(self) -> float | None:
        return None if self.before_tokens == 0 else 100.0 * self.delta / self.before_tokens


@dataclass(frozen=True)
class ToolDelta:
    """A tool that is ``added``, ``removed``, ``grown``, ``shrunk`` or ``changed`` (same size, other text)."""

    name: str
    kind: str
    before: int | None
    after: int | None
    fields: tuple[Change, ...] = field(default=())

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


def load(path: Path) -> Record:
    """The baseline record at ``path``; :class:`BaselineError` for every reason it cannot serve as one."""
    try:  # a regular file only, bounded: a FIFO or a device would block or never end
        text = bounded.read_regular(path, bounded.MAX_RECORD_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} does not exist") from None
    except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
        raise BaselineError(f"baseline {path} cannot be read: {exc}") from None
    try:
        record = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise BaselineError(f"baseline {path} is not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise BaselineError(f"baseline {path} is not a measurement record (a JSON {type(record).__name__})")
    try:
        schemas.check("measurement", record, where=str(path))
    except schemas.SchemaViolation as exc:
        raise BaselineError(f"baseline {path} is not a valid measurement record:\n{exc}") from None
    if record["status"] not in NUMBERED or not isinstance(record["totalTokens"], int):
        raise BaselineError(f"baseline {path} has status {record['status']!r} and no token count to compare against")
    forged = refusal(record, f"baseline {path}")  # its figures are published beside the new ones
    if forged:
        raise BaselineError(forged)
    return cast(Record, record)  # the schema check above makes it one


def compare(baseline: Record, current: Record) -> Comparison:
    """Compare two measured records; :class:`BaselineError` when ``current`` has no number."""
    if current.get("status") not in NUMBERED or not isinstance(current.get("totalTokens"), int):
        raise BaselineError(f"the server has status {current.get('status')!r} and no token count: "
                            "nothing to compare with the baseline")
    result = Comparison(counted(baseline["totalTokens"]), counted(current["totalTokens"]),
                        counted(baseline["toolCount"]), counted(current["toolCount"]),
                        same_capture=baseline["canonicalSha256"] == current["canonicalSha256"])
    before, after = _tokens_by_key(baseline.get("tools") or []), _tokens_by_key(current.get("tools") or [])
    for key, tokens in after.items():
        if key not in before:
            result.added.append(Change(key[0], None, tokens))
        elif tokens > before[key]:
            result.grown.append(Change(key[0], before[key], tokens))
        elif tokens < before[key]:
            result.shrunk.append(Change(key[0], before[key], tokens))
    result.removed = [Change(key[0], tokens, None) for key, tokens in before.items() if key not in after]
    result.grown.sort(key=lambda c: -c.delta)
    result.shrunk.sort(key=lambda c: c.delta)
    return result


@dataclass(frozen=True)
class GateFailure:
    """One reason the step fails: a short ``title`` and a ``message`` (plain text)."""

    title: str
    message: str


def evaluate(record: Record, inputs: Inputs, comparison: Comparison | None,
             baseline_error: str | None) -> list[GateFailure]:
    """Every gate failure for ``record``; ``baseline_error`` says why no ``comparison`` could be made."""
    failures: list[GateFailure] = []
    tokens = record.get("totalTokens")
    if record.get("status") not in NUMBERED or tokens is None:
        why = (record.get("notes") or ["no note"])[0]
        failures.append(GateFailure("server not measured",
                                    f"{record['server']}: status {record['status']} (no token count): {why}"))
    elif inputs.budget is not None and tokens > inputs.budget:
        failures.append(GateFailure("over budget", f"{record['server']}: {tokens:,} tokens is above the budget of "
                                    f"{inputs.budget:,} by {tokens - inputs.budget:,}"))
    if comparison is None and (inputs.baseline is not None
                               or (baseline_error is not None and inputs.fail_on_increase is not None)):
        failures.append(GateFailure("baseline comparison failed", baseline_error or "the comparison could not be made"))
    for label, limit in (("max-increase", inputs.max_increase), ("fail-on-increase", inputs.fail_on_increase)):
        if comparison is not None and limit is not None:
            allowed = limit.allowed(comparison.before_tokens)
            if comparison.delta > allowed:
                failures.append(GateFailure(f"increase above {label}",
                                            _increase_message(record, comparison, label, limit, allowed)))
    return failures


def _increase_message(record: Record, comparison: Comparison, label: str, limit, allowed: float) -> str:
    pct = "" if comparison.percent is None else f" ({comparison.percent:+.1f}%)"
    return (f"{record['server']}: {comparison.before_tokens:,} → {comparison.after_tokens:,} tokens, "
            f"{comparison.delta:+,}{pct}; {label} {limit} allows at most {math.floor(allowed):,}")


def tool_deltas(base: Record, head: Record) -> list[ToolDelta]:
    """Every tool that differs between two records with a capture, largest growth first, then the removed."""
    before, after = _paired(base), _paired(head)
    found: list[ToolDelta] = []
    for key, (tokens, tool) in after.items():
        if key not in before:
            found.append(ToolDelta(key[0], "added", None, tokens, _fields({}, tool)))
            continue
        old_tokens, old_tool = before[key]
        fields = _fields(old_tool, tool)
        if fields or tokens != old_tokens:
            kind = "grown" if tokens > old_tokens else "shrunk" if tokens < old_tokens else "changed"
            found.append(ToolDelta(key[0], kind, old_tokens, tokens, fields))
    found.sort(key=lambda d: -d.delta)
    found += [ToolDelta(key[0], "removed", tokens, None, _fields(tool, {}))
              for key, (tokens, tool) in before.items() if key not in after]
    return found


def _keys(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """Each row's key: its name and which occurrence of that name it is (1, 2, …)."""
    seen: dict[str, int] = {}
    keys = []
    for row in rows:
        name = str(row["name"])
        seen[name] = seen.get(name, 0) + 1
        keys.append((name, seen[name]))
    return keys


def _tokens_by_key(rows: list[Any]) -> dict[tuple[str, int], int]:
    return {key: int(row["tokens"]) for key, row in zip(_keys(rows), rows)}


def _paired(record: Record) -> dict[tuple[str, int], tuple[int, object]]:
    rows, capture = record.get("tools") or [], record.get("rawToolsCapture") or []
    return {key: (int(row["tokens"]), capture[index] if index < len(capture) else {})
            for index, (key, row) in enumerate(zip(_keys(rows), rows))}


def _fields(before: object, after: object) -> tuple[Change, ...]:
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    names = [n for n in NAMED_FIELDS if n in old or n in new]
    names += sorted(n for n in {*old, *new} if n not in NAMED_FIELDS and n != "name")
    changes = []
    for name in names:
        old_text, new_text = _text(old, name), _text(new, name)
        if old_text != new_text:
            changes.append(Change(name, _count(old_text), _count(new_text)))
    return tuple(changes)


def _text(tool: dict[str, Any], name: str) -> str | None:
    return canonical.stringify(tool[name]) if name in tool and tool[name] is not None else None


def _count(text: str | None) -> int | None:
    return None if text is None else tokenizer.count(text)


def counted(value: object) -> int:
    """A measured record's count, typed: ``totalTokens`` or ``toolCount``."""
    assert isinstance(value, int)  # a measured status carries integer counts (schema + status checked by load/compare)
    return value


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")
