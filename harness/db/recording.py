"""What a checked sweep records: its ``history.csv`` rows (``stage_history``) and its commit message."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from harness.db import history
from harness.db.committed import head_record
from harness.db.staging import Staging
from harness.util import published, schemas


def stage_history(records: dict[str, dict], root: Path, staging: Staging, date: dt.date) -> tuple[list[str], list[str]]:
    """Stage ``history.csv`` with this sweep's rows; ``(staged paths, problems)``. Bad lines already
    there are kept and reported; HistoryError when the file is unusable.
    """
    rows = [history.row_for(date.isoformat(), _typed(rec)) for _, rec in sorted(records.items())]
    for row in rows:
        schemas.check("history", row, where=f"history.csv row {row['date']},{row['server']}")
    existing, bad = history.read_lenient(root / published.HISTORY)  # valid by the reader's own rules
    merged = history.merge([row.to_json() for row in existing], rows)
    text = history.render(merged, bad, validate=False)
    problems = [f"{line.problem} (kept as it is; fix it by hand)" for line in bad]
    if _read_text(root / published.HISTORY) == text:
        return [], problems
    staging.write_text(published.HISTORY, text)
    return [published.HISTORY], problems


def check_history(root: Path) -> None:
    """HistoryError when ``history.csv`` cannot take rows; checked before measuring."""
    history.check_usable(root / published.HISTORY)


def newest_dates(root: Path) -> dict[str, str]:
    """server → the newest date it has a valid history row for."""
    rows, _ = history.read_lenient(root / published.HISTORY)
    newest: dict[str, str] = {}
    for row in rows:
        newest[row.server] = max(newest.get(row.server, ""), row.date)
    return newest


def commit_message(records: dict[str, dict], repo, date: dt.date, guard_reason: str) -> str:
    """``sweep YYYY-MM-DD: N servers``, counts by status and the biggest movements against HEAD."""
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
