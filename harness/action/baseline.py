"""A previous measurement (the baseline) and what changed since: tools added, removed, grown.

The baseline is a ``measurement.json`` written by this harness (``schemas/measurement.schema.json``)
whose status carries a number (``measured`` or ``dynamic``). Anything else — a missing file, an
unreadable one, text that is not JSON, JSON that is not a record, a record without a number — is a
:class:`BaselineError`, because a comparison that cannot be made must never read as a pass.

Tools are matched by name (the n-th tool of a repeated name matches the n-th of the same name).
Token figures are the per-tool diagnostics of the records (``tools[].tokens``): each tool's JSON
on its own, so they do not sum to ``totalTokens``; the delta is always ``totalTokens`` minus
``totalTokens``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.rederive import refusal
from harness.probe.build_record import MEASURED_STATUSES
from harness.util import bounded, schemas


class BaselineError(ValueError):
    """The comparison cannot be made; the message says why, naming the file."""


@dataclass(frozen=True)
class ToolChange:
    """One tool's per-tool tokens before and after (``None`` on the side where it is absent)."""

    name: str
    before: int | None
    after: int | None

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


@dataclass
class Comparison:
    """``delta`` = current totalTokens − baseline totalTokens (tokens); ``percent`` is that delta
    relative to the baseline (``None`` when the baseline is 0)."""

    before_tokens: int
    after_tokens: int
    before_tool_count: int
    after_tool_count: int
    added: list[ToolChange] = field(default_factory=list)
    removed: list[ToolChange] = field(default_factory=list)
    grown: list[ToolChange] = field(default_factory=list)
    shrunk: list[ToolChange] = field(default_factory=list)
    same_capture: bool = False

    @property
    def delta(self) -> int:
        return self.after_tokens - self.before_tokens

    @property
    def percent(self) -> float | None:
        return None if self.before_tokens == 0 else 100.0 * self.delta / self.before_tokens


def load(path: Path) -> dict:
    """The baseline record at ``path``. Raises :class:`BaselineError` for every reason it cannot
    serve as a baseline."""
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
    if record["status"] not in MEASURED_STATUSES or not isinstance(record["totalTokens"], int):
        raise BaselineError(f"baseline {path} has status {record['status']!r} and no token count to compare against")
    forged = refusal(record, f"baseline {path}")  # its figures are published beside the new ones
    if forged:
        raise BaselineError(forged)
    return record


def compare(baseline: dict, current: dict) -> Comparison:
    """Compare two measured records. Raises :class:`BaselineError` when ``current`` has no number."""
    if current.get("status") not in MEASURED_STATUSES or not isinstance(current.get("totalTokens"), int):
        raise BaselineError(f"the server has status {current.get('status')!r} and no token count: "
                            "nothing to compare with the baseline")
    result = Comparison(baseline["totalTokens"], current["totalTokens"], baseline["toolCount"], current["toolCount"],
                        same_capture=baseline["canonicalSha256"] == current["canonicalSha256"])
    before, after = _keyed(baseline["tools"]), _keyed(current["tools"])
    for key, tokens in after.items():
        if key not in before:
            result.added.append(ToolChange(key[0], None, tokens))
        elif tokens > before[key]:
            result.grown.append(ToolChange(key[0], before[key], tokens))
        elif tokens < before[key]:
            result.shrunk.append(ToolChange(key[0], before[key], tokens))
    result.removed = [ToolChange(key[0], tokens, None) for key, tokens in before.items() if key not in after]
    result.grown.sort(key=lambda c: -c.delta)
    result.shrunk.sort(key=lambda c: c.delta)
    return result


def _keyed(tools: list[dict]) -> dict[tuple[str, int], int]:
    seen: dict[str, int] = {}
    keyed = {}
    for tool in tools:
        name = str(tool["name"])
        seen[name] = seen.get(name, 0) + 1
        keyed[(name, seen[name])] = int(tool["tokens"])
    return keyed


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")
