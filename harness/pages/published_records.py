"""The published records of the catalog's entries, read and checked: :func:`load_records`,
:func:`problems` (badges and history rows that disagree), :class:`RecordError`.

Rules: docs/PAGES.md, "Reading the published records".
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from harness.core.canonical import stringify
from harness.core.jsparse import WireJSONError, parse
from harness.core.record import NUMBERED, STATUSES, Record
from harness.core import tokenizer
from harness.core.rederive import refusal
from harness.db import confine
from harness.db.history import HistoryRow, row_for
from harness.pages.badge import MAX_BADGE_BYTES, badge_for
from harness.pages.regen_cache import Verdicts
from harness.pages.text import as_int
from harness.util import forkpool, published

class RecordError(ValueError):
    """Records that cannot be published; ``errors`` has one ``<path>: <problem>`` line each."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


def record_path(results_dir: Path, name: str) -> Path:
    return Path(results_dir) / name / published.RECORD_FILE


def load_records(results_dir: Path, names: list[str], verdicts: Verdicts | None = None,
                 meanwhile: Callable[[], object] | None = None) -> dict[str, Record]:
    """``{name: record}`` for every name in ``names`` that has a record file; names without one are
    absent from the result. Raises :class:`RecordError` for any unreadable or unusable record.
    ``verdicts``: records whose bytes passed re-derivation before are not re-derived (saved after).
    Re-derivation runs in worker processes when many records need it (``REDERIVE_PARALLEL_FROM``);
    ``meanwhile`` is called once in this process while they do (before re-deriving, without them): it
    must raise nothing, and must not read the records."""
    outcome: dict[str, Record | str] = {}  # in ``names`` order: the record, or why it cannot be published
    pending: list[tuple[str, dict, bytes]] = []  # to re-derive
    for name in names:
        path = record_path(results_dir, name)
        try:  # a regular file only, bounded: a FIFO or a device there would block or never end
            data = confine.read_bytes(Path(results_dir).parent, path)
            text = data.decode("utf-8")
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
            outcome[name] = f"{path}: cannot read: {exc}"
            continue
        try:
            record = parse(text)
        except WireJSONError as exc:
            outcome[name] = f"{path}: not JSON: {exc}"
            continue
        if not isinstance(record, dict):
            outcome[name] = f"{path}: not a JSON object"
        elif problem := _problem(record, name):
            outcome[name] = f"{path}: {problem}"
        elif verdicts is not None and verdicts.passed(data):
            outcome[name] = cast(Record, record)
        else:
            outcome[name] = cast(Record, record)  # checked for what publishing relies on, if it re-derives
            pending.append((name, record, data))
    checks = [(record, str(record_path(results_dir, name))) for name, record, _ in pending]
    if forkpool.forks(len(checks), REDERIVE_PARALLEL_FROM):
        _tokenizer_loaded()
    with forkpool.started(_refusal, list(range(len(checks))), REDERIVE_PARALLEL_FROM, shared=checks) as results:
        if meanwhile is not None:
            meanwhile()
        refused = results()
    for (name, _, data), forged in zip(pending, refused):
        if forged:
            outcome[name] = forged
        elif verdicts is not None:
            verdicts.remember(data)
    errors = [value for value in outcome.values() if isinstance(value, str)]
    if errors:
        raise RecordError(errors)
    if verdicts is not None:
        verdicts.save()
    return {name: value for name, value in outcome.items() if not isinstance(value, str)}


# Re-deriving fewer records than this in one process is quicker than starting workers.
REDERIVE_PARALLEL_FROM = 64


def _refusal(checks: list[tuple[dict, str]], at: int) -> str | None:
    """``refusal`` of ``checks[at]`` (inherited by a worker, not pickled: a record holds its whole capture)."""
    return refusal(*checks[at])


def _tokenizer_loaded() -> None:
    """Load the tokenizer from its cache in this process before workers fork, so that they inherit it
    rather than each load it (half a CPU-second each); a failure is left to the workers, which meet it as
    they would have."""
    with contextlib.suppress(Exception):
        tokenizer.load_cached()


def _problem(record: Mapping[str, Any], name: str) -> str | None:
    if record.get("server") != name:
        return f"server is {record.get('server')!r}, expected {name!r} (the directory's name)"
    status = record.get("status")
    if status not in STATUSES:
        return f"status {status!r} is not one of the {len(STATUSES)} statuses"
    if status in NUMBERED:
        for field in ("totalTokens", "toolCount"):
            value = as_int(record.get(field))
            if value is None or value != record.get(field) or value < 0:
                return f"{status} record without a whole {field}"
        if not isinstance(record.get("rawToolsCapture"), list):
            return f"{status} record without a rawToolsCapture array"
    return None


def problems(root: Path, records: dict[str, Record], history: dict[str, list[HistoryRow]]) -> list[str]:
    """One ``<file>: <problem>`` line per badge or history row that disagrees with its record."""
    out: list[str] = []
    for server, record in sorted(records.items()):
        status, tokens = record["status"], as_int(record.get("totalTokens"))
        relative = published.badge(server)
        expected = stringify(badge_for(status, tokens), indent=2) + "\n"
        try:
            committed = confine.read_bytes(Path(root), Path(root) / relative, MAX_BADGE_BYTES).decode("utf-8")
        except FileNotFoundError:
            committed = None
        except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
            out.append(f"{Path(root) / relative}: unreadable ({exc})")
            continue
        if committed is not None and committed != expected:
            out.append(f"{Path(root) / relative}: is not the badge {published.record(server)} gives "
                       f"(status {status!r}, totalTokens {tokens!r})")
        date = str(record.get("measuredAt", ""))[:10]
        typed: Record = {**record, "totalTokens": tokens, "toolCount": as_int(record.get("toolCount"))}
        want = row_for(date, typed)
        for row in history.get(server, []):
            if row.date == date and (row.tokens, row.toolCount, row.status) != (want["tokens"], want["toolCount"], want["status"]):
                out.append(f"{Path(root) / published.HISTORY}: the row {date},{server} says {row.tokens} tokens, "
                           f"{row.toolCount} tools, {row.status}; {published.record(server)} says "
                           f"{want['tokens']} tokens, {want['toolCount']} tools, {want['status']}")
    return out
