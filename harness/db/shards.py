"""A slice measured in shards (``part``, sized by ``count``, the workflow's matrix by ``plan``) and
their directories read back for one publish (``read_shards``, ``check_catalog``).
docs/OPERATIONS.md, "Shards" and "Sweep capacity"."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import cast

from harness.core.jsparse import parse
from harness.core.record import Record
from harness.core.rederive import refusal
from harness.db import confine
from harness.db.catalog import Catalog, Entry
from harness.util import atomic, bounded, names, published, schemas, urls
from harness.util.untrusted import escape

MANIFEST = "shard.json"
MAX_MANIFEST_BYTES = 1024 * 1024

# Sizing one shard job (docs/OPERATIONS.md, "Sweep capacity"): all figures in seconds.
JOB_SECONDS = 30 * 60  # the target wall time of one shard job
SETUP_SECONDS = 6 * 60  # checkout, Python, node, venv, bubblewrap, cache restore, artifact upload
LONGEST_SECONDS = 270  # one measurement's overall deadline at the default 60 s budget: the tail
SERVER_SECONDS = 25  # sweep wall time per server with empty package caches (bench/sweep_cpu.py --wall)
MAX_SHARDS = 256  # GitHub's limit of jobs in one matrix


class ShardError(ValueError):
    """A malformed shard spec or shard directory; ``str()`` names the file and the problem."""


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


def per_shard() -> int:
    """Servers one shard job measures within ``JOB_SECONDS``, cold."""
    return max(1, (JOB_SECONDS - SETUP_SECONDS - LONGEST_SECONDS) // SERVER_SECONDS)


def capacity() -> int:
    """Servers one sweep run measures: every shard full."""
    return MAX_SHARDS * per_shard()


def count(servers: int) -> int:
    """The fewest shards (1 to ``MAX_SHARDS``) that keep each of ``servers`` within ``per_shard``."""
    return min(MAX_SHARDS, max(1, math.ceil(servers / per_shard())))


def plan(entries: list[Entry]) -> list[dict]:
    """One matrix row per shard: ``shard`` (K), ``servers`` and ``packages`` (a digest of its names and
    launches, which key its package caches)."""
    n = count(len(entries))
    rows = []
    for k in range(1, n + 1):
        members = part(entries, k, n)
        launches = "\n".join(f"{e.name}\0{e.command if e.command is not None else e.url}" for e in members)
        rows.append({"shard": k, "servers": len(members),
                     "packages": hashlib.sha256(launches.encode("utf-8", "surrogatepass")).hexdigest()[:16]})
    return rows


def write_manifest(out: Path, date: str, k: int, n: int, names: list[str]) -> None:
    """Write the shard's manifest: its date, part and servers."""
    atomic.write_text(Path(out) / MANIFEST, json.dumps({"date": date, "shard": f"{k}/{n}", "servers": sorted(names)},
                                                       indent=2) + "\n")


def read_shards(dirs: list[Path]) -> tuple[str, dict[str, Record]]:
    """``(date, server → record)`` from shard directories, each record valid and re-derived.

    ``ShardError`` when a manifest, a split, a date or a record does not match the others
    (docs/OPERATIONS.md, "Shards"); ``SchemaViolation`` for an invalid record."""
    dates: set[str] = set()
    records: dict[str, Record] = {}
    parts: dict[int, tuple[Path, int]] = {}
    for directory in dirs:
        manifest = _manifest(Path(directory))
        dates.add(manifest["date"])
        _check_part(Path(directory), manifest, parts)
        for server in manifest["servers"]:
            path = Path(directory) / published.record(server)
            if server in records:
                raise ShardError(f"{path}: server {server!r} appears in more than one shard")
            records[server] = _matching(_record(path, Path(directory)), server, manifest["date"], path)
        _no_strays(Path(directory), manifest["servers"])
    if len(dates) != 1:
        raise ShardError(f"shards are for different dates: {', '.join(sorted(dates))}")
    return dates.pop(), records


def check_catalog(records: dict[str, Record], catalog: Catalog) -> list[str]:
    """One line per record that is not a catalog entry's or not launched as its entry says."""
    problems = []
    for server, rec in sorted(records.items()):
        entry = catalog.get(server)
        if entry is None:
            problems.append(f"shard record {server!r}: no catalog entry of that name")
        elif rec.get("launchCommand") != (entry.command if entry.command is not None else urls.shown(entry.url or "")):
            launched = rec.get("launchCommand")
            launched = urls.shown(launched) if isinstance(launched, str) and entry.url is not None else launched
            problems.append(f"shard record {server!r}: launched {launched!r}, but the catalog entry "
                            f"says {entry.command or urls.shown(entry.url or '')!r}")
    return problems


def _matching(rec: Record, server: str, date: str, path: Path) -> Record:
    """``rec`` when it is the record its manifest line says it is; raises ``ShardError`` if not."""
    if rec.get("server") != server:
        raise ShardError(f"{path}: the manifest lists {server!r} but the record is for {rec.get('server')!r}")
    if str(rec.get("measuredAt", ""))[:10] != date:
        raise ShardError(f"{path}: measuredAt {rec.get('measuredAt')!r} is not on the manifest's date {date}")
    return rec


def _check_part(directory: Path, manifest: dict, parts: dict[int, tuple[Path, int]]) -> None:
    try:
        k, n = parse_spec(str(manifest.get("shard")))
    except ShardError as exc:
        raise ShardError(f"{directory / MANIFEST}: {exc}") from None
    if parts and next(iter(parts.values()))[1] != n:
        raise ShardError(f"{directory / MANIFEST}: shard {k}/{n} does not split the slice like the others "
                         f"({next(iter(parts.values()))[1]} parts)")
    if k in parts:
        raise ShardError(f"{directory / MANIFEST}: shard {k}/{n} is also {parts[k][0]}")
    parts[k] = (directory, n)


def _no_strays(directory: Path, listed: list[str]) -> None:
    results = directory / published.RESULTS
    strays = sorted(p.name for p in results.iterdir() if p.name not in listed) if results.is_dir() else []
    if strays:
        raise ShardError(f"{results}: not listed in {MANIFEST}: {', '.join(strays[:10])}")


def _manifest(directory: Path) -> dict:
    try:
        manifest = json.loads(confine.read_bytes(directory, directory / MANIFEST, MAX_MANIFEST_BYTES).decode("utf-8"))
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
    if len(set(manifest["servers"])) != len(manifest["servers"]):
        raise ShardError(f"{directory / MANIFEST}: a server is listed twice")
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", manifest["date"]):
        raise ShardError(f'{directory / MANIFEST}: field "date" must be YYYY-MM-DD, got {escape(repr(manifest["date"]))[:40]}')
    return manifest


def _record(path: Path, directory: Path) -> Record:
    """The record at ``path``, read without following links, valid and re-derived from its capture
    (a shard comes from a job that ran catalog code)."""
    try:
        value = parse(confine.read_bytes(directory, path).decode("utf-8"))
    except (OSError, ValueError) as exc:  # WireJSONError, UnicodeDecodeError and TooLarge are ValueErrors
        raise ShardError(f"{path}: unreadable record ({exc})") from None
    schemas.check("measurement", value, where=str(path))
    record = cast(Record, value)  # the schema check above is what makes it one
    forged = refusal(dict(record), str(path))
    if forged:
        raise ShardError(forged)
    return record
