"""The notes on retries and the confirming launch, generated from a record's ``status`` and ``attempts`` alone
(``narrative``), so they never claim what did not happen; ``build_record.assertion`` leaves them out.
docs/METHODOLOGY.md, "Retries and the deadline".
"""

from __future__ import annotations

NUMBERED = ("measured", "dynamic")


def narrative(status: str | None, attempts: list[dict]) -> list[str]:
    """The generated notes for a record with ``status`` and ``attempts``."""
    main = [a for a in attempts if isinstance(a, dict) and a.get("role") in ("first", "retry")]
    confirming = [a for a in attempts if isinstance(a, dict) and a.get("role") == "confirmation"]
    if not main:
        return []
    if status in NUMBERED:
        return _captured(status, main, confirming)
    return _failed(status, main)


def _captured(status: str, main: list[dict], confirming: list[dict]) -> list[str]:
    notes = []
    if len(main) > 1:
        verb = "measured" if status == "measured" else "captured"
        before = "; then ".join(_ended(i, a) for i, a in enumerate(main[:-1], start=1))
        notes.append(f"{verb} on retry {len(main) - 1} ({_label(len(main), main[-1])}) after {before}")
    if confirming and confirming[0].get("status"):  # none made (--single): "confirmed": false says it
        second = confirming[0]
        notes.append(f"second launch failed ({second['status']}: {second.get('evidence') or 'no evidence'}); the "
                     "first launch's capture is published, unconfirmed")
    return notes


def _failed(status: str | None, main: list[dict]) -> list[str]:
    notes = []
    if len(main) > 1:
        statuses = [a.get("status") for a in main]
        if len(set(statuses)) == 1:
            budgets = ", ".join(_seconds(a) for a in main)
            notes.append(f"failed the same way on retry {len(main) - 1}: {status} on every attempt (budgets: {budgets})")
        else:
            steps = "; ".join(f"{_label(i, a)}: {a.get('status')}" for i, a in enumerate(main, start=1))
            notes.append(f"failed differently on retry {len(main) - 1}: {steps}; the published status is the last "
                         "attempt's")
    if status == "timeout":
        widest = max(_budget(a) for a in main)
        notes.append(f"widest budget tried: {widest:g} s")
    return notes


def _ended(index: int, attempt: dict) -> str:
    return f"{_label(index, attempt)} ended {attempt.get('status')}: {attempt.get('evidence') or 'no evidence'}"


def _label(index: int, attempt: dict) -> str:
    kind = "retry" if attempt.get("role") == "retry" else "attempt"
    return f"attempt {index}, {kind} at {_seconds(attempt)}" if kind == "retry" else f"attempt {index} at {_seconds(attempt)}"


def _budget(attempt: dict) -> float:
    value = attempt.get("budgetMs")
    return value / 1000 if isinstance(value, (int, float)) else 0.0


def _seconds(attempt: dict) -> str:
    return f"{_budget(attempt):g} s"
