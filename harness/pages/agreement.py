"""Files the sweep writes beside a record say what the record says: before anything is published,
each committed badge (``badges/<server>.json``) must be the badge its record gives, and the
``history.csv`` row of the record's own date must carry the record's tokens, tool count and status.
A file that disagrees was edited by hand (or forged) and is refused by name, never published."""

from __future__ import annotations

from pathlib import Path

from harness.core.canonical import stringify
from harness.db import confine
from harness.db.history import HistoryRow, row_for
from harness.pages.badge import MAX_BADGE_BYTES, badge_for
from harness.pages.text import as_int


def problems(root: Path, records: dict[str, dict], history: dict[str, list[HistoryRow]]) -> list[str]:
    """One ``<file>: <problem>`` line per badge or history row that disagrees with its record."""
    out: list[str] = []
    for server, record in sorted(records.items()):
        status, tokens = record.get("status"), as_int(record.get("totalTokens"))
        relative = f"badges/{server}.json"
        expected = stringify(badge_for(status, tokens), indent=2) + "\n"
        try:
            committed = confine.read_bytes(Path(root), Path(root) / relative, MAX_BADGE_BYTES).decode("utf-8")
        except FileNotFoundError:
            committed = None
        except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
            out.append(f"{Path(root) / relative}: unreadable ({exc})")
            continue
        if committed is not None and committed != expected:
            out.append(f"{Path(root) / relative}: is not the badge results/{server}/measurement.json gives "
                       f"(status {status!r}, totalTokens {tokens!r})")
        date = str(record.get("measuredAt", ""))[:10]
        typed = {**record, "totalTokens": tokens, "toolCount": as_int(record.get("toolCount"))}
        want = row_for(date, typed)
        for row in history.get(server, []):
            if row.date == date and (row.tokens, row.toolCount, row.status) != (want["tokens"], want["toolCount"], want["status"]):
                out.append(f"{Path(root) / 'history.csv'}: the row {date},{server} says {row.tokens} tokens, "
                           f"{row.toolCount} tools, {row.status}; results/{server}/measurement.json says "
                           f"{want['tokens']} tokens, {want['toolCount']} tools, {want['status']}")
    return out
