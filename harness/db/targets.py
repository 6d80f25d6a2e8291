"""Catalog entries as probe targets: ``target_for``."""

from __future__ import annotations

from harness.db.catalog import Entry
from harness.probe.target import NotApplicable, Target

DEFAULT_TIMEOUT_SECONDS = 60.0


def target_for(entry: Entry) -> Target:
    declared = entry.not_applicable
    return Target(
        name=entry.name,
        command=entry.command,
        url=entry.url,
        env=tuple(entry.env),
        set_env=tuple(entry.set_env),
        headers=tuple(entry.headers),
        timeout_seconds=float(entry.timeout_seconds or DEFAULT_TIMEOUT_SECONDS),
        needs_git=entry.needs_git,
        not_applicable=NotApplicable(declared.reason, declared.evidence) if declared else None,
        package=entry.package,
    )
