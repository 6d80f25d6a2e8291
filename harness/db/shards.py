"""Sweeping past one runner: shards measured separately, merged and published together
(issue #6, "Scale past one runner").

``sweep --shard K/N --out DIR`` measures the K-th of N parts of the chosen entries into ``DIR``
(``DIR/results/<server>/measurement.json`` plus ``DIR/shard.json``) and publishes nothing.
``sweep --merge DIR...`` reads every shard, validates each record, and then runs the same guard and
publish steps as a single sweep. Membership of a shard depends only on the sorted entry names,
so every process computes the same split.

A shard directory is checked against itself before anything of it is published (issue #10): the
manifest's names are distinct slugs, each record names the server its manifest line and directory
name it (a record of one server filed under another's name is refused, never published over the
other's record), each record's ``measuredAt`` falls on the manifest's date, no record sits in the
directory without a manifest line, and all shards agree on N and hold distinct parts. Against the
catalog (:func:`check_catalog`): every server is an entry and its record's launch is the entry's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.core.jsparse import parse
from harness.core.rederive import refusal
from harness.db import confine
from harness.db.catalog import Entry
from harness.util import atomic, bounded, names, schemas, urls
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

    Raises ``ShardError`` for a missing or malformed manifest, shards of different dates or splits,
    a server listed without its record, a record that is not the server listed (or not of the
    manifest's date), a record not listed, or the same server in two shards; ``SchemaViolation``
    for an invalid record (naming its file and path).
    """
    dates, records, parts = set(), {}, {}
    for directory in dirs:
        manifest = _manifest(Path(directory))
        dates.add(manifest["date"])
        _check_part(Path(directory), manifest, parts)
        for server in manifest["servers"]:
            path = Path(directory) / "results" / server / "measurement.json"
            if server in records:
                raise ShardError(f"{path}: server {server!r} appears in more than one shard")
            records[server] = _matching(_record(path, Path(directory)), server, manifest["date"], path)
        _no_strays(Path(directory), manifest["servers"])
    if len(dates) != 1:
        raise ShardError(f"shards are for different dates: {', '.join(sorted(dates))}")
    return dates.pop(), records


def check_catalog(records: dict[str, dict], catalog) -> list[str]:
    """One line per merged record that the catalog does not vouch for: a server that is not an
    entry, or a record whose ``launchCommand`` is not the entry's command (or URL)."""
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


def _matching(rec: dict, server: str, date: str, path: Path) -> dict:
    """``rec`` when it is the record its manifest line says it is; raises ``ShardError`` if not."""
    if rec.get("server") != server:
        raise ShardError(f"{path}: the manifest lists {server!r} but the record is for {rec.get('server')!r}")
    if str(rec.get("measuredAt", ""))[:10] != date:
        raise ShardError(f"{path}: measuredAt {rec.get('measuredAt')!r} is not on the manifest's date {date}")
    return rec


def _check_part(directory: Path, manifest: dict, parts: dict) -> None:
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
    results = directory / "results"
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


def _record(path: Path, directory: Path) -> dict:
    """The record at ``path`` in the shard ``directory``: never through a symbolic link, valid, and
    with every figure re-derived from its own capture (a shard was made by a job that ran catalog
    code: nothing it says is published unchecked)."""
    try:
        value = parse(confine.read_bytes(directory, path).decode("utf-8"))
    except (OSError, ValueError) as exc:  # WireJSONError, UnicodeDecodeError and TooLarge are ValueErrors
        raise ShardError(f"{path}: unreadable record ({exc})") from None
    schemas.check("measurement", value, where=str(path))
    forged = refusal(value, str(path))
    if forged:
        raise ShardError(forged)
    return value
