"""Reading the published records (``results/<name>/measurement.json``) for the catalog's entries.

Each record is parsed with ``harness.core.jsparse.parse`` (JavaScript ``JSON.parse`` semantics, so
counts arrive as floats) and checked only for what publishing relies on — not against today's
full schema, because a record written by an older harness legitimately lacks fields added since
(``serverInstructions``, ``isolation.arch``, ``negotiatedProtocolVersion``) and must still publish,
saying what is not on record.

Relied on: an object whose ``server`` is the directory's name and whose ``status`` is one of the
statuses; for ``measured``/``dynamic``, a whole ``totalTokens``, ``toolCount`` and a list
``rawToolsCapture`` from which totalTokens, toolCount, canonicalLength and canonicalSha256 (and
the side figures) re-derive (``harness.core.rederive.refusal``: an edited number is refused by
name, never published). Anything else raises :class:`RecordError` listing every bad file: a record
that cannot be read (a symbolic link, not a regular file — a FIFO or a device would block or never
end — or larger than ``harness.util.bounded.MAX_RECORD_BYTES``) is a fault to fix, never an entry to
quietly show as not-yet-run.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.jsparse import WireJSONError, parse
from harness.core.rederive import refusal
from harness.db import confine
from harness.db.history import NUMBERED, STATUSES
from harness.pages.text import as_int


class RecordError(ValueError):
    """Records that cannot be published; ``errors`` has one ``<path>: <problem>`` line each."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


def record_path(results_dir: Path, name: str) -> Path:
    return Path(results_dir) / name / "measurement.json"


def load_records(results_dir: Path, names: list[str]) -> dict[str, dict]:
    """``{name: record}`` for every name in ``names`` that has a record file; names without one are
    absent from the result. Raises :class:`RecordError` for any unreadable or unusable record."""
    found: dict[str, dict] = {}
    errors: list[str] = []
    for name in names:
        path = record_path(results_dir, name)
        try:  # a regular file only, bounded: a FIFO or a device there would block or never end
            text = confine.read_bytes(Path(results_dir).parent, path).decode("utf-8")
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
            errors.append(f"{path}: cannot read: {exc}")
            continue
        try:
            record = parse(text)
        except WireJSONError as exc:
            errors.append(f"{path}: not JSON: {exc}")
            continue
        problem = _problem(record, name)
        forged = None if problem else refusal(record, str(path))
        if forged:
            errors.append(forged)
        elif problem:
            errors.append(f"{path}: {problem}")
        else:
            found[name] = record
    if errors:
        raise RecordError(errors)
    return found


def _problem(record: object, name: str) -> str | None:
    if not isinstance(record, dict):
        return "not a JSON object"
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
