"""The run files of the readings published beside the headline (issue #14): where they live,
how they are read and written.

    results/divergence.json        Claude divergence, tools-delta/v1
    results/cross-check.json       the sd2k/mcp-tokens cross-check, cli-cross-check/v1
    results/capability-probe.json  the capability probe, capability-probe/v1

Each is one JSON object with a ``rows`` array holding at most one row per server, validated
against ``schemas/<kind>.schema.json`` on read and before every write, and written atomically
(``JSON.stringify(doc, null, 2)`` + newline, with raw C1 and bidi characters written as
``\\uXXXX`` by ``untrusted.json_text``: a row may quote a tool name). None of them touches a
measurement record, a badge or a canonical hash. A run over some servers replaces those servers'
rows and keeps the others (:func:`merge_rows`), so ``--only`` never erases what an earlier run found.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.canonical import stringify
from harness.core.jsparse import WireJSONError, parse
from harness.db import record_file
from harness.util import atomic, schemas, untrusted

FILES = {"divergence": "results/divergence.json", "cross-check": "results/cross-check.json",
         "capability-probe": "results/capability-probe.json"}


class ReadingsError(ValueError):
    """A run file exists but cannot be used; the message names the file and the problem."""


def path_for(root: Path, kind: str) -> Path:
    return Path(root) / FILES[kind]


def read(root: Path, kind: str) -> dict | None:
    """The parsed, schema-valid run file of ``kind`` under ``root``; ``None`` when there is none.
    Raises :class:`ReadingsError` for a file that is unreadable, not JSON or off-schema."""
    path = path_for(root, kind)
    try:  # a regular file only, bounded: a FIFO or a device there would block or never end
        text = record_file.read_bytes(Path(root), path).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
        raise ReadingsError(f"{path}: cannot read: {exc}") from None
    try:
        doc = parse(text)
    except WireJSONError as exc:
        raise ReadingsError(f"{path}: not JSON: {exc}") from None
    try:
        schemas.check(kind, doc, where=str(path))
    except schemas.SchemaViolation as exc:
        raise ReadingsError(str(exc)) from None
    return doc


def write(root: Path, kind: str, doc: dict) -> Path:
    """Validate ``doc`` and write it atomically; returns the path. Raises ``SchemaViolation``."""
    path = path_for(root, kind)
    schemas.check(kind, doc, where=str(path))
    return atomic.write_text(path, untrusted.json_text(stringify(doc, indent=2)) + "\n")


def merge_rows(previous: list, fresh: list, names: list[str] | None = None) -> list[dict]:
    """``previous`` rows with every server of ``fresh`` replaced, sorted by server; rows of servers
    not in ``names`` (when given: the catalog) are dropped."""
    rows = {r["server"]: r for r in previous if isinstance(r, dict) and isinstance(r.get("server"), str)}
    rows.update({r["server"]: r for r in fresh})
    keep = set(names) if names is not None else set(rows)
    return [rows[name] for name in sorted(rows) if name in keep]
