"""Cost per release, from the records git holds: :func:`rows`, :func:`render_json`
(``results/releases.json``), :func:`section`.

Rules: docs/PAGES.md, "Tool vectors and backfill".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.core.record import NUMBERED
from harness.pages.backfill import record_versions
from harness.pages.text import as_int, md, num
from harness.pages.published_records import RecordError
from harness.util import atomic, bounded, published, untrusted

METHOD = "release-cost/v1"
MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Measured:
    """One release as last measured: ``version``, UTC ``date``, ``tokens`` and the tool names."""

    version: str
    date: str
    tokens: int
    tools: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseRow:
    """A move from release ``previous`` to ``version``, measured on ``date``."""

    server: str
    previous: str
    version: str
    date: str
    tokensBefore: int
    tokensAfter: int
    tokensDelta: int
    toolsAdded: tuple[str, ...]
    toolsRemoved: tuple[str, ...]

    def summary(self) -> str:
        """``1.4.0 → 1.5.0: +1,204 tokens, 3 tools added`` (tool counts only when tools moved)."""
        parts = [f"{'+' if self.tokensDelta >= 0 else '−'}{num(abs(self.tokensDelta))} tokens"]
        for count, word in ((len(self.toolsAdded), "added"), (len(self.toolsRemoved), "removed")):
            if count:
                parts.append(f"{count} tool{'s' if count != 1 else ''} {word}")
        return f"{self.previous} → {self.version}: {', '.join(parts)}"


def release_of(record: Mapping[str, Any]) -> str | None:
    """The release a record measured, or ``None`` when it does not say."""
    resolved = record.get("resolvedPackage")
    if isinstance(resolved, dict) and isinstance(resolved.get("version"), str) and resolved["version"]:
        return resolved["version"]
    match = re.search(r"(?:@|==)(\d+(?:\.\d+)+[0-9A-Za-z.+-]*)(?:\s|$)", str(record.get("launchCommand") or ""))
    return match.group(1) if match else None


_PIN = re.compile(r"(?<=\S)(?:@|==)\d+(?:\.\d+)+[0-9A-Za-z.+-]*(?=\s|$)")


def launch_of(record: Mapping[str, Any]) -> tuple[str, str]:
    """How the record's server was launched, its release pin left out: ``(launchCommand, isolation mode)``."""
    isolation = record.get("isolation")
    mode = str(isolation.get("mode")) if isinstance(isolation, dict) else ""
    return _PIN.sub("", str(record.get("launchCommand") or "")), mode


def measured(record: Mapping[str, Any]) -> Measured | None:
    """The record as a measured release, or ``None`` (a failure, or no release said)."""
    version, tokens = release_of(record), as_int(record.get("totalTokens"))  # a committed record parses 2378.0
    if record.get("status") not in NUMBERED or version is None or tokens is None:
        return None
    tools = tuple(sorted(str(t.get("name")) for t in record.get("tools") or () if isinstance(t, dict)))
    return Measured(version, str(record.get("measuredAt") or "")[:10], tokens, tools)


def series(name: str, records: list[Mapping[str, Any]]) -> list[ReleaseRow]:
    """The release moves in ``records`` (one server's, oldest first)."""
    out: list[ReleaseRow] = []
    last: Measured | None = None
    last_launch: tuple[str, str] | None = None
    for record in records:
        now = measured(record)
        if now is None:
            continue
        launch = launch_of(record)
        # another launch (an option added or dropped, another isolation) moves the cost too: never a release's row
        if last is not None and now.version != last.version and launch == last_launch:
            before, after = set(last.tools), set(now.tools)
            out.append(ReleaseRow(name, last.version, now.version, now.date, last.tokens, now.tokens,
                                  now.tokens - last.tokens, tuple(sorted(after - before)), tuple(sorted(before - after))))
        last, last_launch = now, launch
    return out


def rows(root: Path, names: list[str], current: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, list[ReleaseRow]]:
    """``{name: release rows}`` from the git history of ``root`` (see module doc); ``current``:
    each name's working-tree record, appended last when it is not the newest committed one."""
    versions: dict[str, list[Mapping[str, Any]]] = {name: [] for name in names}
    for name, record, _ in record_versions(root, names):
        versions[name].append(record)
    for name, record in (current or {}).items():
        if name in versions and (not versions[name] or versions[name][-1] != record):
            versions[name].append(record)
    return {name: series(name, versions[name]) for name in names}


def render_json(by_server: dict[str, list[ReleaseRow]]) -> str:
    """``results/releases.json``: every server's rows, servers by name, rows oldest first."""
    doc = {"method": METHOD,
           "servers": {name: [asdict(r) | {"summary": r.summary()} for r in by_server[name]]
                       for name in sorted(by_server) if by_server[name]}}
    return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


@dataclass(frozen=True)
class Refreshed:
    """What :func:`refresh` did: the file's path when its bytes changed (else ``None``), and the rows."""

    changed: Path | None
    by_server: dict[str, list[ReleaseRow]]


def refresh(root: Path, names: list[str], current: Mapping[str, Mapping[str, Any]], out: Path | None = None) -> Refreshed:
    """Rewrite ``out`` (default ``<root>/results/releases.json``) from git and the ``current`` records,
    unless nothing moved and there is no such file. Raises ``BackfillError`` when the history cannot be
    read (a shallow clone)."""
    by_server = rows(root, names, current)
    path = Path(out) if out is not None else Path(root) / published.RELEASES
    if not any(by_server.values()) and not path.exists():
        return Refreshed(None, by_server)  # nothing moved yet: no file to publish
    text = untrusted.json_text(render_json(by_server))
    try:
        if bounded.read_regular(path, MAX_BYTES).decode("utf-8") == text:
            return Refreshed(None, by_server)
    except (OSError, ValueError):
        pass  # absent or unreadable: written afresh
    atomic.write_text(path, text)
    return Refreshed(path, by_server)


def load(root: Path) -> dict[str, list[ReleaseRow]]:
    """The rows of ``<root>/results/releases.json`` (``{}`` when there is none). Raises
    ``RecordError`` naming the file when it cannot be read as what :func:`render_json` writes."""

    path = Path(root) / published.RELEASES
    try:
        doc = json.loads(bounded.read_regular(path, MAX_BYTES))
        return {str(name): [_row(item) for item in items] for name, items in doc["servers"].items()}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RecordError([f"{published.RELEASES}: not a release-cost file ({type(exc).__name__}: {str(exc)[:120]})"]) from None


def _row(item: dict) -> ReleaseRow:
    fields = {k: item[k] for k in ReleaseRow.__dataclass_fields__}
    for key in ("tokensBefore", "tokensAfter", "tokensDelta"):
        if type(fields[key]) is not int:
            raise ValueError(f"{key} is not a whole number")
    for key in ("toolsAdded", "toolsRemoved"):
        fields[key] = tuple(str(t) for t in fields[key])
    values: dict[str, Any] = {k: (v if k.startswith(("tokens", "tools")) else str(v)) for k, v in fields.items()}
    return ReleaseRow(**values)


def section(rows_: list[ReleaseRow]) -> str:
    """The "Cost per release" section of a server page ('' when there are no rows)."""
    table = markdown(rows_)
    return f"## Cost per release\n\nMethod {METHOD}: each move to another release, as measured.\n\n{table}" if table else ""


def markdown(rows_: list[ReleaseRow]) -> str:
    """A minimal Markdown table of one server's rows, newest first ('' when there are none)."""

    if not rows_:
        return ""
    lines = ["| Release | Measured | Tokens | Change | Tools added | Tools removed |", "|---|---|---|---|---|---|"]
    for r in reversed(rows_):
        delta = f"{'+' if r.tokensDelta >= 0 else '−'}{num(abs(r.tokensDelta))}"
        lines.append(f"| {md(r.previous)} → {md(r.version)} | {r.date} | {num(r.tokensAfter)} | {delta} | "
                     f"{md(', '.join(r.toolsAdded)) or '—'} | {md(', '.join(r.toolsRemoved)) or '—'} |")
    return "\n".join(lines) + "\n"
