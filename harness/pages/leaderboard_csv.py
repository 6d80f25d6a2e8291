"""``results/leaderboard.csv``: the leaderboard as data, one line per catalog entry, in the
leaderboard's order (``harness.pages.board.build_rows``).

Cells: counts as plain integers; empty when the row has no such number; booleans ``true`` /
``false`` (empty when not applicable). Text cells are single lines (``text.one_line``); a text cell
that would start with ``=``, ``+``, ``-`` or ``@`` is prefixed with ``'`` so a spreadsheet never
reads a tool name or a note as a formula. Lines end with ``\\n``; quoting is the csv module's
minimal quoting, so the bytes depend only on the rows.
"""

from __future__ import annotations

import csv
import io

from harness.pages import readings
from harness.pages.board import Row
from harness.pages.text import one_line

# Column order of leaderboard.csv. APPEND-ONLY: a new column goes at the end; an existing column is
# never renamed, moved or removed, so a reader that addresses columns by position keeps working.
COLUMNS = (
    "rank", "server", "status", "tokens", "toolCount", "band", "color",
    "largestTool", "largestToolTokens",
    "sessionStartTokens", "sessionStartIsFloor", "sessionStartNamesTokens",
    "sessionStartInstructionsTokens", "deferringCostsMore",
    "isolation", "arch", "measuredAt", "canonicalSha256", "category", "notes",
    *readings.CSV_COLUMNS,
)


def render(rows: list[Row]) -> str:
    """The file text for ``rows`` (header line first)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        cells = _cells(row)
        writer.writerow([cells[c] for c in COLUMNS])
    return out.getvalue()


def _cells(row: Row) -> dict[str, str]:
    record = row.record or {}
    session = row.session
    numbered = row.tokens is not None
    return {
        "rank": _n(row.rank),
        "server": row.name,
        "status": row.status,
        "tokens": _n(row.tokens),
        "toolCount": _n(row.tool_count),
        "band": row.band[1] if numbered else "",
        "color": row.band[0] if numbered else "",
        "largestTool": _text(row.largest[0]) if row.largest else "",
        "largestToolTokens": _n(row.largest[1]) if row.largest else "",
        "sessionStartTokens": _n(session.tokens) if session else "",
        "sessionStartIsFloor": _bool(session.floor) if session else "",
        "sessionStartNamesTokens": _n(session.names) if session else "",
        "sessionStartInstructionsTokens": _n(session.instructions) if session else "",
        "deferringCostsMore": _bool(row.defers_costlier) if session else "",
        "isolation": _text(row.isolation.get("mode")),
        "arch": _text(row.isolation.get("arch")),
        "measuredAt": _text(record.get("measuredAt")),
        "canonicalSha256": _text(record.get("canonicalSha256")),
        "category": _text(row.entry.category),
        "notes": _text("; ".join(row.notes)),
        **readings.csv_cells(row),
    }


def _n(value: int | None) -> str:
    return "" if value is None else str(int(value))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _text(value: object) -> str:
    text = one_line(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
