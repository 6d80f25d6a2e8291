"""Which entries are the same server (launch argv, env names, URL, launch directory), so each is measured once."""

from __future__ import annotations

import hashlib
import json

from harness.audit.model import STDIO, Entry


def identity(entry: Entry) -> str:
    """A short stable id for ``entry``'s server (12 hex digits of a SHA-256 over its identity)."""
    parts = [entry.transport, list(entry.launch_argv), sorted(entry.env_names), entry.launch_url or "",
             entry.cwd if entry.transport == STDIO else None]
    if entry.sandboxed:  # measured in the sandbox: never merged with the same command run as the user
        parts.append("sandbox")
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def group(entries: list[Entry]) -> dict[str, list[Entry]]:
    """Launchable entries by identity, in first-seen order."""
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.launchable:
            groups.setdefault(identity(entry), []).append(entry)
    return groups


def same_values(a: Entry, b: Entry) -> bool:
    """Whether two entries of one identity hand their server the same values (compared in memory,
    never recorded)."""
    return a.env_values == b.env_values and a.header_values == b.header_values and \
        sorted(a.unevaluated) == sorted(b.unevaluated)
