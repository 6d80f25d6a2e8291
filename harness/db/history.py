"""``history.csv``: one row per (date, server) — what a server measured on the day it was swept
(methodology, "Trends over time").

Columns (append-only; a new column only ever goes at the end):
``date,server,tokens,toolCount,status,isolation`` — ``tokens``/``toolCount`` empty when the
sweep produced no number; ``isolation`` empty for rows recorded before the column existed
("not recorded"). Every row is validated against ``schemas/history.schema.json`` before writing.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from harness.util import atomic, schemas

COLUMNS = ("date", "server", "tokens", "toolCount", "status", "isolation")


def row_for(date: str, record: dict) -> dict:
    """The history row (a dict of typed values) for a record swept on ``date`` (YYYY-MM-DD)."""
    return {
        "date": date,
        "server": record["server"],
        "tokens": record["totalTokens"],
        "toolCount": record["toolCount"],
        "status": record["status"],
        "isolation": (record.get("isolation") or {}).get("mode"),
    }


def read(path: Path) -> list[dict]:
    """Rows of ``path`` as typed dicts (ints or ``None``); an absent file reads as no rows."""
    if not path.exists():
        return []
    rows = []
    for raw in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))):
        rows.append({
            "date": raw["date"], "server": raw["server"],
            "tokens": int(raw["tokens"]) if raw.get("tokens") else None,
            "toolCount": int(raw["toolCount"]) if raw.get("toolCount") else None,
            "status": raw["status"], "isolation": raw.get("isolation") or None,
        })
    return rows


def merge(existing: list[dict], new: list[dict]) -> list[dict]:
    """``existing`` with ``new`` applied: one row per (date, server), a new row replacing an old
    one for the same key (so a rerun on the same day is idempotent), sorted by date then server."""
    rows = {(r["date"], r["server"]): r for r in existing}
    for row in new:
        rows[(row["date"], row["server"])] = row
    return [rows[key] for key in sorted(rows)]


def render(rows: list[dict]) -> str:
    """CSV text of ``rows`` (header first, ``\\n`` line ends). Validates every row.

    Raises ``harness.util.schemas.SchemaViolation`` naming the row.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for index, row in enumerate(rows, start=2):
        schemas.check("history", row, where=f"history.csv line {index}")
        writer.writerow(["" if row[c] is None else row[c] for c in COLUMNS])
    return out.getvalue()


def write(path: Path, rows: list[dict]) -> Path:
    """Validate and atomically write ``rows`` to ``path``."""
    return atomic.write_text(path, render(rows))
