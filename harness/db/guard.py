"""The harness-fault guard: ``check`` withholds a sweep in which many servers lost their number at
once (docs/METHODOLOGY.md, 'When a whole sweep is withheld (harness fault)').
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.record import NUMBERED, Record
from harness.probe.status import NOT_MEASURED_HERE

MIN_REGRESSIONS = 5


def has_real_number(record: Mapping[str, Any] | None) -> bool:
    """True for a measured/dynamic record with at least one tool."""
    return record is not None and record.get("status") in NUMBERED and (record.get("toolCount") or 0) > 0


@dataclass(frozen=True)
class GuardResult:
    """``verdict``: pass, fault or not-performed; ``reason``: one sentence; ``regressed`` and
    ``eligible``: who lost a number, and how many could have.
    """

    verdict: str
    reason: str
    regressed: tuple[str, ...]
    eligible: int

    @property
    def fault(self) -> bool:
        return self.verdict == "fault"


def check(committed: Mapping[str, Mapping[str, Any] | None], fresh: Mapping[str, Record]) -> GuardResult:
    """Apply the rule to ``committed`` (server → record at HEAD or None) and ``fresh`` records."""
    machine = {s for s in fresh if (fresh[s] or {}).get("status") == NOT_MEASURED_HERE}
    eligible = sorted(s for s in fresh if has_real_number(committed.get(s)) or s in machine)
    regressed = tuple(s for s in eligible if not has_real_number(fresh[s]))
    if not eligible:
        return GuardResult("not-performed", "harness-fault check could not be performed: no swept server had a "
                           "real number at HEAD to compare against", (), 0)
    share = f"{len(regressed)} of {len(eligible)} swept server(s) with a real number at HEAD came back without one"
    if machine:
        share = (f"{len(regressed)} of {len(eligible)} swept server(s) with a real number at HEAD or a failure of "
                 f"this machine came back without one ({len(machine)} not-measured-here: the machine's)")
    if len(regressed) >= MIN_REGRESSIONS and 2 * len(regressed) >= len(eligible):
        names = ", ".join(regressed[:10]) + (" …" if len(regressed) > 10 else "")
        return GuardResult("fault", f"harness fault: {share} (threshold: at least {MIN_REGRESSIONS} and at least "
                           f"half): {names}", regressed, len(eligible))
    return GuardResult("pass", f"harness-fault check passed: {share} (a fault needs at least {MIN_REGRESSIONS} and "
                       "at least half)", regressed, len(eligible))
