"""``history.csv`` (repository root): one row per (date, server) — what a server measured on the
day it was swept (methodology, "Trends over time"). Columns are append-only: a new column only
ever goes at the end. Writing validates every row against ``schemas/history.schema.json``.

Columns, in order (``COLUMNS``)::

    date,server,tokens,toolCount,status,isolation
    2026-11-30,memory,2378,9,measured,host
    2026-11-30,linear,,,remote-auth-wall,docker
    2026-08-03,memory,2378,9,measured,           <- isolation not recorded

Each row read is a :class:`HistoryRow`; ``row.to_json()`` is the object
``schemas/history.schema.json`` describes (``tokens``/``toolCount`` ``int`` or ``None``,
``isolation`` ``"host" | "sandbox" | "docker"`` or ``None`` = not recorded). Rows written before
the isolation column existed — a five-column header, or a row one cell short — read as not
recorded (methodology, "Trends over time": unknown conditions are shown as unknown, never
back-filled). The reader applies the schema's rules by hand (the jsonschema validator costs too
much per row at 150,000 rows; ``tests/pages`` checks the two agree) and raises
:class:`HistoryError` naming every bad line at once, never dropping a row silently. A sweep reads
with :func:`read_lenient` instead: bad lines are reported, kept verbatim at the end of the file it
writes, and never stop it adding its own rows (issue #10). Lines end at ``\n`` (a ``\r\n`` pair
reads as one end, a leading byte-order mark is dropped); what is written is always ``\n``-ended,
without a mark.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from dataclasses import dataclass
from pathlib import Path

from harness.db import record_file
from harness.util import atomic, schemas

COLUMNS = ("date", "server", "tokens", "toolCount", "status", "isolation")
ISOLATIONS = ("host", "sandbox", "docker")
STATUSES = ("measured", "dynamic", "auth-required", "startup-failure", "timeout", "not-applicable",
            "protocol-mismatch", "remote-auth-wall", "unreachable", "malformed-reply", "uncountable",
            "too-large", "not-measured-here", "not-yet-run")
NUMBERED = ("measured", "dynamic")
NOT_RECORDED = "not recorded"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SERVER = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_COUNT = re.compile(r"^(0|[1-9]\d{0,14})$")
# A well-formed line, matched in one step (the common case); anything else goes through _row,
# which says what is wrong. Counts must be present exactly for measured/dynamic (checked after the
# match), and a date's calendar validity is checked once per distinct date.
_FAST = re.compile(r"^(\d{4}-\d{2}-\d{2}),([a-z0-9][a-z0-9._-]*),(|0|[1-9]\d{0,14}),(|0|[1-9]\d{0,14}),"
                   rf"({'|'.join(STATUSES)})(?:,(host|sandbox|docker|))?$")


class HistoryError(ValueError):
    """history.csv cannot be read; ``errors`` holds one ``history.csv:<line>: …`` line each."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


@dataclass(frozen=True)
class HistoryRow:
    date: str
    server: str
    tokens: int | None
    toolCount: int | None
    status: str
    isolation: str | None  # None: not recorded

    @property
    def isolation_label(self) -> str:
        """The isolation, or ``"not recorded"``."""
        return self.isolation or NOT_RECORDED

    def to_json(self) -> dict:
        """The row as ``schemas/history.schema.json`` describes it."""
        return {"date": self.date, "server": self.server, "tokens": self.tokens,
                "toolCount": self.toolCount, "status": self.status, "isolation": self.isolation}


def read_history(path: str | Path) -> list[HistoryRow]:
    """Every row of ``path`` in file order; ``[]`` when the file does not exist.

    Raises :class:`HistoryError` for a wrong header or any invalid row (all reported together).
    """
    rows, bad = read_lenient(path)
    if bad:
        raise HistoryError([line.problem for line in bad])
    return rows


@dataclass(frozen=True)
class BadLine:
    """A line of history.csv that is not a valid row: its 1-based ``number``, its ``text`` as it is
    in the file, and ``problem`` (``history.csv:<number>: …``)."""

    number: int
    text: str
    problem: str


def read_lenient(path: str | Path) -> tuple[list[HistoryRow], list[BadLine]]:
    """``(valid rows in file order, bad lines)`` of ``path``: a malformed row is reported, not fatal
    (issue #10: bad committed data never blocks publishing the rest). ``([], [])`` when the file does
    not exist. Raises :class:`HistoryError` only when the file as a whole is unusable — unreadable,
    not UTF-8, or a wrong header — since no row could then be added to it safely."""
    path = Path(path)
    try:  # a regular file only, bounded: a FIFO or a device there would block or never end
        text = record_file.read_bytes(path.parent, path).decode("utf-8")
    except FileNotFoundError:
        return [], []
    except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
        raise HistoryError([f"{path.name}: cannot read: {exc}"]) from None
    lines = _lines(text)
    if not lines:
        return [], []
    header = [cell.strip() for cell in next(csv.reader(lines[:1]))]
    if tuple(header) not in (COLUMNS, COLUMNS[:5]):
        raise HistoryError([f"{path.name}:1: header must be {','.join(COLUMNS)}, got {','.join(header)}"])
    rows: list[HistoryRow] = []
    errors: list[BadLine] = []
    dates: dict[str, bool] = {}
    for number, line in enumerate(lines[1:], start=2):
        fast = _FAST.match(line)
        if fast and (fast[5] in NUMBERED) == bool(fast[3]) == bool(fast[4]) and \
                dates.setdefault(fast[1], _is_date(fast[1])):
            date, server, tokens, tools, status, isolation = fast.groups()
            rows.append(HistoryRow(date, server, int(tokens) if tokens else None, int(tools) if tools else None,
                                   status, isolation or None))
            continue
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error:  # the one csv.Error a single line can raise
            errors.append(BadLine(number, line, f"{path.name}:{number}: a carriage return inside an unquoted cell"))
            continue
        if not cells or cells == [""]:
            continue
        row, problem = _row(cells)
        if problem:
            errors.append(BadLine(number, line, f"{path.name}:{number}: {problem}"))
        else:
            rows.append(row)
    return rows, errors


def _row(cells: list[str]) -> tuple[HistoryRow | None, str | None]:
    if len(cells) == 5:
        cells = [*cells, ""]
    if len(cells) != 6:
        return None, f"expected 6 cells ({','.join(COLUMNS)}), got {len(cells)}"
    date, server, tokens, tools, status, isolation = (c.strip() for c in cells)
    if not _DATE.match(date) or not _is_date(date):
        return None, f"date must be YYYY-MM-DD, got {_shown(date)}"
    if not _SERVER.match(server):
        return None, f"server must be a slug, got {_shown(server)}"
    if status not in STATUSES:
        return None, f"status must be one of {', '.join(STATUSES)}, got {_shown(status)}"
    if isolation and isolation not in ISOLATIONS:
        return None, f"isolation must be host, sandbox, docker or empty, got {_shown(isolation)}"
    numbers = []
    for label, cell in (("tokens", tokens), ("toolCount", tools)):
        if status in NUMBERED and not _COUNT.match(cell):
            return None, f"{label} must be a whole number for status {status}, got {_shown(cell)}"
        if status not in NUMBERED and cell:
            return None, f"{label} must be empty for status {status}, got {_shown(cell)}"
        numbers.append(int(cell) if cell else None)
    return HistoryRow(date, server, numbers[0], numbers[1], status, isolation or None), None


def _lines(text: str) -> list[str]:
    """The file's lines: split at ``\n`` only (``\r\n`` read as one), a leading byte-order mark
    dropped. Never ``str.splitlines``: it also splits at U+2028, U+0085, form feed … inside a cell,
    and a bad line kept "verbatim" would then come back cut in two (and its first half could pass as a row)."""
    lines = text.removeprefix("\ufeff").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _shown(cell: str) -> str:
    """A cell quoted for a problem line, at most about 80 characters (a bad line may be megabytes)."""
    return repr(cell) if len(cell) <= 80 else repr(cell[:80]) + f"… ({len(cell):,} characters)"


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def check_usable(path: str | Path) -> None:
    """Raise :class:`HistoryError` when ``path`` could not take a new row at all — unreadable, not
    UTF-8, or a wrong header — without parsing every row (an absent file is usable)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")  # no newline translation: a lone CR stays in its line
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as exc:
        raise HistoryError([f"{path.name}: cannot read: {exc}"]) from None
    first = text.removeprefix("\ufeff").split("\n", 1)[0].removesuffix("\r")
    header = [cell.strip() for cell in next(csv.reader([first]), [])]
    if text and tuple(header) not in (COLUMNS, COLUMNS[:5]):
        raise HistoryError([f"{path.name}:1: header must be {','.join(COLUMNS)}, got {','.join(header)}"])


def by_server(rows: list[HistoryRow]) -> dict[str, list[HistoryRow]]:
    """Rows grouped by server, each list sorted by date; a repeated (date, server) keeps the row
    that comes last in the file (one row per day is the file's rule)."""
    latest: dict[tuple[str, str], HistoryRow] = {}
    for row in rows:
        latest[(row.server, row.date)] = row
    grouped: dict[str, list[HistoryRow]] = {}
    for (server, _), row in sorted(latest.items()):
        grouped.setdefault(server, []).append(row)
    return grouped


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
    """Rows of ``path`` as schema-shaped dicts (``HistoryRow.to_json``); an absent file reads as
    no rows. Raises ``HistoryError`` naming every malformed line."""
    return [row.to_json() for row in read_history(path)] if Path(path).exists() else []


def merge(existing: list[dict], new: list[dict]) -> list[dict]:
    """``existing`` with ``new`` applied: one row per (date, server), a new row replacing an old
    one for the same key (so a rerun on the same day is idempotent), sorted by date then server."""
    rows = {(r["date"], r["server"]): r for r in existing}
    for row in new:
        rows[(row["date"], row["server"])] = row
    return [rows[key] for key in sorted(rows)]


def render(rows: list[dict], kept: list[BadLine] = (), validate: bool = True) -> str:
    """CSV text of ``rows`` (header first, ``\\n`` line ends), then the ``kept`` bad lines exactly
    as they were (never dropped, never rewritten: a human fixes them). Validates every row against
    the schema unless ``validate`` is false — for rows that are all either read by this module's
    reader (the same rules, applied by hand) or already checked by the caller: jsonschema costs
    about 0.4 ms a row, a minute at 150,000 rows.

    Raises ``harness.util.schemas.SchemaViolation`` naming the row.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for index, row in enumerate(rows, start=2):
        if validate:
            schemas.check("history", row, where=f"history.csv line {index}")
        writer.writerow(["" if row[c] is None else row[c] for c in COLUMNS])
    for bad in kept:
        out.write(bad.text + "\n")
    return out.getvalue()


def write(path: Path, rows: list[dict]) -> Path:
    """Validate and atomically write ``rows`` to ``path``."""
    return atomic.write_text(path, render(rows))
