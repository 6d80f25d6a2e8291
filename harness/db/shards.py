"""Sweeping past one runner: shards measured separately, merged and published together
(issue #6, "Scale past one runner").

``sweep --shard K/N --out DIR`` measures the K-th of N parts of the chosen entries into ``DIR``
(``DIR/results/<server>/measurement.json`` plus ``DIR/shard.json``) and publishes nothing.
``sweep --merge DIR...`` reads every shard, validates each record, and then runs the same guard and
publish steps as a single sweep. Membership of a shard depends only on the sorted entry names,
so every process computes the same split.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.core.jsparse import parse
from harness.db.catalog import Entry
from harness.util import atomic, bounded, names, schemas
from harness.util.untrusted import escape

MANIFEST = "shard.json"
MAX_MANIFEST_BYTES = 1024 * 1024


class ShardError(ValueError):
    """A shard spec or shard directory is malformed; ``str()`` names the file and the problem."""


def parse_spec(text: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)`` with 1 ≤ K ≤ N. Raises ``ShardError``."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"--shard expects K/N (e.g. 2/3), got {text!r}") from None
    if not 1 <= k <= n:
        raise ShardError(f"--shard {text}: K must be between 1 and N")
    return k, n


def part(entries: list[Entry], k: int, n: int) -> list[Entry]:
    """The K-th of N parts: entries sorted by name, dealt round-robin (sizes differ by at most 1)."""
    ordered = sorted(entries, key=lambda e: e.name)
    return [e for i, e in enumerate(ordered) if i % n == k - 1]


def write_manifest(out: Path, date: str, k: int, n: int, names: list[str]) -> None:
    """Record which date and part a shard directory holds."""
    atomic.write_text(Path(out) / MANIFEST, json.dumps({"date": date, "shard": f"{k}/{n}", "servers": sorted(names)},
                                                       indent=2) + "\n")


def read_shards(dirs: list[Path]) -> tuple[str, dict[str, dict]]:
    """``(date, server → record)`` from shard directories; every record is schema-validated.

    Raises ``ShardError`` for a missing manifest, shards of different dates, a server listed in a
    manifest without its record, or the same server in two shards; ``SchemaViolation`` for an
    invalid record (naming its file and path).
    """
    dates, records = set(), {}
    for directory in dirs:
        manifest = _manifest(Path(directory))
        dates.add(manifest["date"])
        for server in manifest["servers"]:
            path = Path(directory) / "results" / server / "measurement.json"
            if server in records:
                raise ShardError(f"{path}: server {server!r} appears in more than one shard")
            records[server] = _record(path)
    if len(dates) != 1:
        raise ShardError(f"shards are for different dates: {', '.join(sorted(dates))}")
    return dates.pop(), records


def _manifest(directory: Path) -> dict:
    try:
        manifest = json.loads(bounded.read_regular(directory / MANIFEST, MAX_MANIFEST_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise ShardError(f"{directory / MANIFEST}: not a shard manifest ({escape(exc)})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("servers"), list) or "date" not in manifest:
        raise ShardError(f"{directory / MANIFEST}: expected {{date, shard, servers}}")
    # Names become paths (results/<server>/): full-match slugs only, never "../x" or "a\n".
    for index, server in enumerate(manifest["servers"]):
        if not names.is_result_name(server):
            raise ShardError(f'{directory / MANIFEST}: field "servers" item #{index + 1}: '
                             f"{escape(repr(server))[:90]} is not {names.RESULT_RULE}")
    if not isinstance(manifest["date"], str):
        raise ShardError(f'{directory / MANIFEST}: field "date" is not a string')
    return manifest


def _record(path: Path) -> dict:
    try:
        value = parse(bounded.read_regular(path, bounded.MAX_RECORD_BYTES).decode("utf-8"))
    except (OSError, ValueError) as exc:  # WireJSONError, UnicodeDecodeError and TooLarge are ValueErrors
        raise ShardError(f"{path}: unreadable record ({exc})") from None
    schemas.check("measurement", value, where=str(path))
    return value
