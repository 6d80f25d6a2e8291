"""The gate: does this measurement pass the author's limits?

It fails (one :class:`GateFailure` per reason) when

* the server has no number — any status other than ``measured``/``dynamic``;
* ``budget`` is set and totalTokens is above it;
* a ``baseline`` was given and the comparison could not be made, for any reason
  (see :mod:`harness.action.baseline`) — never a silent pass;
* a comparison with the base commit could not be made while ``fail-on-increase`` is set;
* ``max-increase`` (over the baseline) or ``fail-on-increase`` (over the base commit, or the
  baseline) is set and totalTokens grew by more than it allows
  (tokens, or a percentage of the baseline's totalTokens; over a baseline of 0 any growth fails a
  percentage limit).

No failures means the step passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.action.baseline import Comparison
from harness.action.inputs import Inputs
from harness.probe.build_record import MEASURED_STATUSES


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


def _increase_message(record: dict, comparison: Comparison, label: str, limit, allowed: float) -> str:
    pct = "" if comparison.percent is None else f" ({comparison.percent:+.1f}%)"
    return (f"{record['server']}: {comparison.before_tokens:,} → {comparison.after_tokens:,} tokens, "
            f"{comparison.delta:+,}{pct}; {label} {limit} allows at most {math.floor(allowed):,}")
