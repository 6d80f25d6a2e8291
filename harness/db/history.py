"""``history.csv``: one row per (date, server) (docs/METHODOLOGY.md, 'Trends over time'). Readers:
``read_history`` (strict), ``read_lenient`` (bad lines kept and reported); writers: ``render``,
``write``. Columns are append-only; a row one cell short has isolation not recorded.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.record import ISOLATION_MODES, NUMBERED, STATUSES, Record
from harness.db import confine
from harness.util import atomic, schemas

COLUMNS = ("date", "server", "tokens", "toolCount", "status", "isolation")
ISOLATIONS = ISOLATION_MODES  # a recorded cell is one of them
NOT_RECORDED = "not recorded"
# ASCII digits only: "\d" takes every script's ("1٣" would be read as 13).
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_SERVER = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_COUNT = re.compile(r"^(0|[1-9][0-9]{0,14})$")
# A well-formed line, matched in one step (the common case); anything else goes through _row,
# which says what is wrong. Counts must be present exactly for measured/dynamic (checked after the
# match), and a date's calendar validity is checked once per distinct date.
_FAST = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}),([a-z0-9][a-z0-9._-]*),(|0|[1-9][0-9]{0,14}),(|0|[1-9][0-9]{0,14}),"
                   rf"({'|'.join(STATUSES)})(?:,(host|sandbox|docker|))?$")
_FAST_LINES = re.compile(_FAST.pattern, re.MULTILINE)


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

    @classmethod
    def checked(cls, date: str, server: str, tokens: int | None, toolCount: int | None, status: str,
                isolation: str | None) -> HistoryRow:
        """The same row as ``HistoryRow(...)``, for cells already checked: set in one step, as the frozen
        class's own ``__init__`` sets each field through ``object.__setattr__`` (half of reading a long history)."""
        row = object.__new__(cls)
        state = row.__dict__  # (item by item: a third quicker than ``update`` with keywords)
        state["date"], state["server"], state["tokens"] = date, server, tokens
        state["toolCount"], state["status"], state["isolation"] = toolCount, status, isolation
        return row

    @property
    def isolation_label(self) -> str:
        return self.isolation or NOT_RECORDED

    def to_json(self) -> dict:
        return {"date": self.date, "server": self.server, "tokens": self.tokens,
                "toolCount": self.toolCount, "status": self.status, "isolation": self.isolation}


def read_history(path: str | Path) -> list[HistoryRow]:
    """Every row of ``path`` in file order (``[]`` if absent); HistoryError names every bad line."""
    rows, bad = read_lenient(path)
    if bad:
        raise HistoryError([line.problem for line in bad])
    return rows


@dataclass(frozen=True)
class BadLine:
    """A line that is not a valid row: its 1-based ``number``, its ``text`` and the ``problem``."""

    number: int
    text: str
    problem: str


def read_lenient(path: str | Path) -> tuple[list[HistoryRow], list[BadLine]]:
    """``(valid rows, bad lines)`` of ``path``; HistoryError only when no row could be added to it."""
    path = Path(path)
    try:  # a regular file only, bounded: a FIFO or a device there would block or never end
        text = confine.read_bytes(path.parent, path).decode("utf-8")
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
    return _scan(lines[1:], 2, path.name)


def rows_after(text: str, lines_before: int) -> list[HistoryRow] | None:
    """The rows of ``text``, the lines that follow the first ``lines_before`` lines (header included, each
    ended by a newline) of a history file; ``None`` when a line is not a valid row (:func:`read_lenient`
    says which)."""
    if text.startswith("\ufeff"):  # a mark the whole file's reading would keep in its line
        return None
    rows, errors = _scan(_lines(text), lines_before + 1, "")
    return None if errors else rows


def _scan(lines: list[str], first: int, name: str) -> tuple[list[HistoryRow], list[BadLine]]:
    """``(valid rows, bad lines)`` of ``lines``, numbered from ``first``."""
    rows: list[HistoryRow] = []
    errors: list[BadLine] = []
    dates: dict[str, bool] = {}
    whole = _all_valid(lines)
    if whole is not None:
        return whole, []
    fast_match, checked = _FAST.match, HistoryRow.checked
    for number, line in enumerate(lines, start=first):
        fast = fast_match(line)
        if fast:
            date, server, tokens, tools, status, isolation = fast.groups()
            real = dates.get(date)
            if real is None:
                real = dates[date] = _is_date(date)
            if real and (status in NUMBERED) == bool(tokens) == bool(tools):
                rows.append(checked(date, server, int(tokens) if tokens else None, int(tools) if tools else None,
                                    status, isolation or None))
                continue
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error:  # the one csv.Error a single line can raise
            errors.append(BadLine(number, line, f"{name}:{number}: a carriage return inside an unquoted cell"))
            continue
        if not cells or cells == [""]:
            continue
        row, problem = _row(cells)
        if row is None:
            errors.append(BadLine(number, line, f"{name}:{number}: {problem}"))
        else:
            rows.append(row)
    return rows, errors


def _all_valid(lines: list[str]) -> list[HistoryRow] | None:
    """The rows of ``lines`` when every line is a valid row in the one-step form (what :func:`_scan`'s loop takes
    from each), read in one pass over them all; ``None`` otherwise."""
    # As many matches as lines: a match holds no newline and starts at a line's start, so each line matched whole.
    cells = _FAST_LINES.findall("\n".join(lines))
    if len(cells) != len(lines) or not all(map(_is_date, {cell[0] for cell in cells})) or \
            not all((status in NUMBERED) == bool(tokens) == bool(tools) for _, _, tokens, tools, status, _ in cells):
        return None
    checked = HistoryRow.checked
    return [checked(date, server, int(tokens) if tokens else None, int(tools) if tools else None, status, isolation or None)
            for date, server, tokens, tools, status, isolation in cells]


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
    """Lines split at ``\\n`` only, a leading BOM dropped (``splitlines`` would cut a kept bad line
    at U+2028).
    """
    lines = text.removeprefix("\ufeff").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _shown(cell: str) -> str:
    """A cell quoted for a problem line, cut to about 80 characters."""
    return repr(cell) if len(cell) <= 80 else repr(cell[:80]) + f"… ({len(cell):,} characters)"


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def check_usable(path: str | Path) -> None:
    """HistoryError when ``path`` could not take a row (unreadable, not UTF-8, wrong header)."""
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
    """Rows per server sorted by date; of a repeated (date, server) the last row in the file wins."""
    latest: dict[str, dict[str, HistoryRow]] = {}
    for row in rows:
        dated = latest.get(row.server)
        if dated is None:
            dated = latest[row.server] = {}
        dated[row.date] = row
    return {server: [dated[day] for day in sorted(dated)] for server, dated in sorted(latest.items())}


def row_for(date: str, record: Record) -> dict:
    """The history row for a record swept on ``date``."""
    return {
        "date": date,
        "server": record["server"],
        "tokens": record["totalTokens"],
        "toolCount": record["toolCount"],
        "status": record["status"],
        "isolation": (record.get("isolation") or {}).get("mode"),
    }


def read(path: Path) -> list[dict]:
    """Rows of ``path`` as schema-shaped dicts; HistoryError naming every bad line."""
    return [row.to_json() for row in read_history(path)] if Path(path).exists() else []


def merge(existing: list[dict], new: list[dict]) -> list[dict]:
    """``existing`` with ``new`` applied, one row per (date, server), sorted: a rerun is idempotent."""
    rows = {(r["date"], r["server"]): r for r in existing}
    for row in new:
        rows[(row["date"], row["server"])] = row
    return [rows[key] for key in sorted(rows)]


def render(rows: list[dict], kept: Sequence[BadLine] = (), validate: bool = True) -> str:
    """CSV text of ``rows`` then the ``kept`` bad lines verbatim; ``validate=False`` skips the schema
    (0.4 ms a row) for rows already checked.
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
    return atomic.write_text(path, render(rows))
