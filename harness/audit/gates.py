"""The audit's gates, which fail closed: ``--budget``, ``--baseline``/``--max-increase``, ``--changed``, ``--suggest``.

Rule: docs/AUDIT.md, "Gates and exit codes".
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from harness.audit import changed, suggest
from harness.util import schemas

MAX_BASELINE_BYTES = 16 * 1024 * 1024


class BaselineError(ValueError):
    """The baseline report cannot be used (``str()`` says why)."""


@dataclass(frozen=True)
class Gate:
    """One gate's result and its reasons (what it checked, when it passed)."""

    gate: str
    passed: bool
    reasons: list[str]

    def to_json(self) -> dict:
        return {"gate": self.gate, "passed": self.passed, "reasons": self.reasons}


@dataclass(frozen=True)
class Increase:
    """An allowed increase: ``amount`` tokens, or percent of the baseline's totalTokens."""

    amount: float
    percent: bool

    def allowed(self, baseline_tokens: int) -> float:
        """The largest allowed increase in tokens over ``baseline_tokens``."""
        return baseline_tokens * self.amount / 100.0 if self.percent else self.amount

    def __str__(self) -> str:
        text = f"{self.amount:g}"
        return f"{text}%" if self.percent else f"{text} tokens"


def parse_increase(text: str) -> Increase:
    """``"500"`` → 500 tokens, ``"10%"`` → 10 percent. Raises ``ValueError``."""
    match = re.fullmatch(r"([0-9]{1,12}(?:\.[0-9]{1,6})?) *(%?)", text.strip().replace(",", ""))
    if not match:
        raise ValueError(f"--max-increase must be tokens (e.g. 500) or a percentage (e.g. 10%), got {text[:40]!r}")
    return Increase(float(match.group(1)), bool(match.group(2)))


def load_baseline(path: Path) -> dict:
    """Read and validate a baseline audit report. Raises ``BaselineError``."""
    try:
        size = path.stat().st_size
        if not path.is_file() or size > MAX_BASELINE_BYTES:
            raise BaselineError(f"baseline {path}: not a regular file of at most {MAX_BASELINE_BYTES:,} bytes")
        document = json.loads(path.read_text(encoding="utf-8"))
    except BaselineError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"baseline {path}: cannot be read: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise BaselineError(f"baseline {path}: not JSON: {str(exc)[:200]}") from None
    try:
        schemas.check("audit-report", document, where=f"baseline {path}")
    except schemas.SchemaViolation as exc:
        raise BaselineError(f"baseline {path} is not an audit report:\n{exc}") from None
    return document


def budget_gate(report: dict, budget: int) -> Gate:
    """Every session's total must be an exact figure at or under ``budget``."""
    reasons: list[str] = []
    worst: tuple[str, int] | None = None
    for session in report["sessions"]:
        total = session["total"]
        if total is None:
            reasons.append(f"{session['label']}: no total ({session['refused']})")
        elif total["floor"] and total["tokens"] > budget:
            reasons.append(f"{session['label']}: {total['display']} tokens is over the budget of {budget:,} by at "
                           f"least {total['tokens'] - budget:,}, before counting "
                           f"{', '.join(total['unmeasured'][:5]) or 'an entry'} (no number)")
        elif total["floor"]:
            reasons.append(f"{session['label']}: {total['display']} tokens is a floor (no number for "
                           f"{', '.join(total['unmeasured'][:5]) or 'an entry'}), which could be over the budget of "
                           f"{budget:,}")
        elif total["tokens"] > budget:
            reasons.append(f"{session['label']}: {total['tokens']:,} tokens is over the budget of {budget:,} by "
                           f"{total['tokens'] - budget:,}")
        if total is not None and (worst is None or total["tokens"] > worst[1]):
            worst = (session["label"], total["tokens"])
    if not report["sessions"]:
        reasons.append("no session was found to gate")
    if reasons or worst is None:  # no session, or none with a total, added a reason
        return Gate("budget", False, reasons)
    return Gate("budget", True, [f"costliest session: {worst[0]}, {worst[1]:,} tokens ≤ {budget:,}"])


def baseline_gate(report: dict, baseline: dict, max_increase: Increase | None) -> Gate:
    """Config-by-config comparison against ``baseline`` (see module doc)."""
    reasons, checked = [], []
    for key in ("methodologyVersion", "encoding", "schemaVersion"):
        if baseline.get(key) != report.get(key):
            reasons.append(f"{key} changed from {baseline.get(key)!r} to {report.get(key)!r}: the numbers are not "
                           "comparable")
    current = {c["path"]: c for c in report["configs"]}
    before = {c["path"]: c for c in baseline["configs"]}
    reasons += [f"{path}: in the baseline, not found now (dropped config)" for path in before if path not in current]
    for path, config in current.items():
        failure, note = _compare(path, config, before.get(path), max_increase)
        (reasons.append(failure) if failure else checked.append(note))
    return Gate("baseline", not reasons, reasons or checked)


def _compare(path: str, config: dict, base: dict | None, increase: Increase | None) -> tuple[str | None, str]:
    now = config["total"]
    if config["state"] != "read":
        return f"{path}: cannot be read now ({config['error']})", ""
    if now["floor"]:
        added = [n for n in now["unmeasured"] if base is None or n not in base["total"]["unmeasured"]]
        statuses = {s["name"]: s["status"] for s in config["servers"]}
        what = ", ".join(f"{n} ({statuses.get(n)})" for n in (added or now["unmeasured"])[:5])
        kind = "added server(s) that cannot be measured" if added else "server(s) that cannot be measured"
        return f"{path}: {kind}: {what} — the total is a floor, the comparison cannot be made", ""
    if base is not None and (base["state"] != "read" or base["total"]["floor"]):
        return f"{path}: the baseline's total was {base['total']['display']} ({base['state']}), not a figure", ""
    before = base["total"]["tokens"] if base else 0
    delta = now["tokens"] - before
    label = "added config, compared with 0" if base is None else f"{before:,} → {now['tokens']:,}"
    if increase is not None:
        allowed = increase.allowed(before)
        if delta > allowed:
            return (f"{path}: {label} tokens, {delta:+,}; max-increase {increase} allows at most "
                    f"{math.floor(allowed):,}"), ""
    return None, f"{path}: {label} tokens ({delta:+,})"


def lookup_gate(name: str, section: dict) -> Gate:
    """``changed``/``suggest``: passed when the check was made, failed with the named problem when not."""
    if section["problem"]:
        return Gate(name, False, [f"--{name} could not be checked: {section['problem']}"])
    return Gate(name, True, [(changed.tally if name == "changed" else suggest.tally)(section)])


def exit_code(report: dict, gates: list[Gate]) -> int:
    """0 when every gate passed and something was measured; 1 otherwise."""
    if report["summary"]["measuredServers"] == 0:
        return 1
    return 0 if all(g.passed for g in gates) else 1
