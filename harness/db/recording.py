"""What a checked sweep records in the database: its ``history.csv`` rows (staged, idempotent per
day) and the commit message that summarizes it. Runs only after every record validated and the
harness-fault guard did not fire; files are staged and moved into place through the journal.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from harness.db import history
from harness.db.committed import head_record
from harness.db.staging import Staging


def stage_history(records: dict[str, dict], root: Path, staging: Staging, date: dt.date) -> list[str]:
    """Stage ``history.csv`` with one row per swept server for ``date`` (idempotent per day)."""
    rows = [history.row_for(date.isoformat(), _typed(rec)) for _, rec in sorted(records.items())]
    merged = history.merge(history.read(root / "history.csv"), rows)
    text = history.render(merged)
    if _read_text(root / "history.csv") == text:
        return []
    staging.write_text("history.csv", text)
    return ["history.csv"]


def commit_message(records: dict[str, dict], repo, date: dt.date, guard_reason: str) -> str:
    """``sweep YYYY-MM-DD: N servers`` + counts by status + the biggest token movements vs HEAD."""
    counts = Counter(rec["status"] for rec in records.values())
    lines = [f"sweep {date.isoformat()}: {len(records)} server(s) — "
             + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))]
    moves = []
    for server, rec in records.items():
        before = head_record(repo, server)
        old, new = _int((before or {}).get("totalTokens")), _int(rec["totalTokens"])
        if old is not None and new is not None and old != new:
            moves.append((abs(new - old), server, old, new))
    if moves:
        lines.append("")
        lines.append("Biggest movements:")
        for _, server, old, new in sorted(moves, key=lambda m: (-m[0], m[1]))[:5]:
            lines.append(f"  {server}: {old:,} → {new:,} tokens ({new - old:+,})")
    lines += ["", guard_reason]
    return "\n".join(lines)


def _typed(rec: dict) -> dict:
    return {**rec, "totalTokens": _int(rec["totalTokens"]), "toolCount": _int(rec["toolCount"])}


def _int(value):
    return int(value) if isinstance(value, float) else value


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None
