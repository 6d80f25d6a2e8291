"""The run files of the readings beside the headline (``results/divergence.json``,
``cross-check.json``, ``capability-probe.json``): ``read``, ``write`` (schema-checked, atomic),
``merge_rows`` (a run over some servers keeps the others' rows).
"""

from __future__ import annotations

from typing import Any

from pathlib import Path

from harness.core.canonical import stringify
from harness.core.jsparse import WireJSONError, parse
from harness.db import confine
from harness.util import atomic, published, schemas, untrusted

FILES = {"divergence": published.DIVERGENCE, "cross-check": published.CROSS_CHECK,
         "capability-probe": published.CAPABILITY_PROBE}


class ReadingsError(ValueError):
    """A run file that exists but cannot be used."""


def path_for(root: Path, kind: str) -> Path:
    return Path(root) / FILES[kind]


def read(root: Path, kind: str) -> dict | None:
    """The schema-valid run file of ``kind``, or None; ReadingsError."""
    path = path_for(root, kind)
    try:  # a regular file only, bounded: a FIFO or a device there would block or never end
        text = confine.read_bytes(Path(root), path).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
        raise ReadingsError(f"{path}: cannot read: {exc}") from None
    try:
        doc: Any = parse(text)  # a dict once the schema check below passes
    except WireJSONError as exc:
        raise ReadingsError(f"{path}: not JSON: {exc}") from None
    try:
        schemas.check(kind, doc, where=str(path))
    except schemas.SchemaViolation as exc:
        raise ReadingsError(str(exc)) from None
    return doc


def write(root: Path, kind: str, doc: dict) -> Path:
    """Validate ``doc`` and write it atomically; SchemaViolation."""
    path = path_for(root, kind)
    schemas.check(kind, doc, where=str(path))
    return atomic.write_text(path, untrusted.json_text(stringify(doc, indent=2)) + "\n")


def merge_rows(previous: list, fresh: list, names: list[str] | None = None) -> list[dict]:
    """``previous`` with each server of ``fresh`` replaced, sorted; servers not in ``names`` dropped."""
    rows = {r["server"]: r for r in previous if isinstance(r, dict) and isinstance(r.get("server"), str)}
    rows.update({r["server"]: r for r in fresh})
    keep = set(names) if names is not None else set(rows)
    return [rows[name] for name in sorted(rows) if name in keep]
