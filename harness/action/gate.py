"""The gate: does this measurement pass the author's limits?

It fails (one :class:`GateFailure` per reason) when

* the server has no number — any status other than ``measured``/``dynamic``;
* ``budget`` is set and totalTokens is above it;
* a ``baseline`` was given and the comparison could not be made, for any reason
  (see :mod:`harness.action.baseline`) — never a silent pass;
* ``max-increase`` is set and totalTokens grew by more than it allows over the baseline
  (tokens, or a percentage of the baseline's totalTokens; over a baseline of 0 any growth fails a
  percentage limit).

No failures means the step passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.action.baseline import Comparison
from harness.action.inputs import Inputs
from harness.probe.record import MEASURED_STATUSES


@dataclass(frozen=True)
class GateFailure:
    """One reason the step fails: a short ``title`` and a ``message`` (plain text)."""

    title: str
    message: str


def evaluate(record: dict, inputs: Inputs, comparison: Comparison | None,
             baseline_error: str | None) -> list[GateFailure]:
    """Every gate failure for ``record`` under ``inputs``; ``comparison`` is the baseline
    comparison when one was made, ``baseline_error`` why it could not be (both ``None`` when no
    baseline was asked for)."""
    failures: list[GateFailure] = []
    tokens = record.get("totalTokens")
    if record.get("status") not in MEASURED_STATUSES or tokens is None:
        why = (record.get("notes") or ["no note"])[0]
        failures.append(GateFailure("server not measured",
                                    f"{record['server']}: status {record['status']} (no token count): {why}"))
    elif inputs.budget is not None and tokens > inputs.budget:
        failures.append(GateFailure("over budget", f"{record['server']}: {tokens:,} tokens is above the budget of "
                                    f"{inputs.budget:,} by {tokens - inputs.budget:,}"))
    if inputs.baseline is not None and comparison is None:
        failures.append(GateFailure("baseline comparison failed", baseline_error or "the comparison could not be made"))
    if comparison is not None and inputs.max_increase is not None:
        allowed = inputs.max_increase.allowed(comparison.before_tokens)
        if comparison.delta > allowed:
            failures.append(GateFailure("increase above max-increase",
                                        _increase_message(record, comparison, inputs, allowed)))
    return failures


def _increase_message(record: dict, comparison: Comparison, inputs: Inputs, allowed: float) -> str:
    pct = "" if comparison.percent is None else f" ({comparison.percent:+.1f}%)"
    return (f"{record['server']}: {comparison.before_tokens:,} → {comparison.after_tokens:,} tokens, "
            f"{comparison.delta:+,}{pct}; max-increase {inputs.max_increase} allows at most {math.floor(allowed):,}")
