"""The one path by which a measurement reaches the database (``sweep``, ``sweep --merge``,
``measure --server``): ``session`` locks, recovers and checks; ``Session.publish`` runs the
journal's steps (docs/OPERATIONS.md, 'Setting up and sweeping').
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from harness.db import confine, recording, staging
from harness.db.catalog import CatalogError
from harness.db.commit import (INPUTS, changed_paths, commit_paths, dirty_inputs, dirty_published, require_repo,
                               sweep_temp_files)
from harness.db.history import HistoryError
from harness.db.lock import RepoLock
from harness.db.staging import Journal, Staging
from harness.pages.badge import stage_badges
from harness.pages.records import RecordError
from harness.pages.regen import regen
from harness.pages.site import SERVER_DIR, SPARK_DIR, TREND_DIR
from harness.util.untrusted import escape


PAGE_FOLDERS = (SERVER_DIR, SPARK_DIR, TREND_DIR)  # where regen removes the pages of entries that left


class Refused(Exception):
    """The run must not go on; ``code`` is the exit code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


@dataclass
class Outcome:
    """What one publish did: ``files`` moved, pages ``regenerated``, ``commit`` sha, ``problems``."""

    files: list[str] = field(default_factory=list)
    regenerated: list[str] = field(default_factory=list)
    commit: str | None = None
    problems: list[str] = field(default_factory=list)


class Session:
    """A held publish lock on one repository."""

    def __init__(self, root: Path, say):
        self.root, self.say = Path(root), say

    def publish(self, stage: Staging, records: dict[str, dict], history_records: dict[str, dict],
                staged: list[str], date: dt.date, message: str | None) -> Outcome:
        """Publish ``staged`` records with their badges and history rows; commit unless ``message``
        is None.
        """
        files = sorted(staged + stage_badges(records, self.root, stage))
        history, problems = recording.stage_history(history_records, self.root, stage, date)
        journal = stage.begin(files, history, message)
        outcome = finish(self.root, journal)
        outcome.problems[:0] = [escape(p) for p in problems]  # history.csv text is committed data, not ours
        return outcome


@contextlib.contextmanager
def session(root: Path, *, commit: bool, wait: bool = False, say=print):
    """Hold the lock, recover, and refuse a committing run over uncommitted changes; LockHeld,
    NotARepository, Refused.
    """
    root = Path(root)
    _refuse_obstacles(root, "nothing was measured")  # before the lock: without a repository it lives in .staging
    with RepoLock(root, wait=wait, on_wait=lambda holder: say(f"waiting for the publish lock, held by {holder}")):
        for line in recover(root):
            say(line)
        if commit:
            require_repo(root)
            dirty = sorted(set(dirty_published(root)) | set(dirty_inputs(root)))
            if dirty:
                raise Refused(2, _dirty_message(dirty))
        try:
            recording.check_history(root)
        except HistoryError as exc:
            raise Refused(2, f"{exc}\nhistory.csv cannot take new rows; nothing was measured") from None
        yield Session(root, say)


def recover(root: Path) -> list[str]:
    """Finish or discard what interrupted runs left; one line per item."""
    root = Path(root)
    lines = [f"removed a temporary file left by an interrupted run: {escape(p)}" for p in sweep_temp_files(root)]
    journals, unjournaled, problems = staging.interrupted(root)
    for journal in journals:
        pending, step = journal.pending(), journal.step
        outcome = finish(root, journal)
        done = f"committed {outcome.commit[:12]}" if outcome.commit else "nothing left to commit" \
            if journal.message is not None else "not a committing run"
        lines.append(f"finished interrupted publish {escape(journal.run)} (stopped at: {step}): {pending} file(s) "
                     f"rolled forward, pages regenerated, {done}")
        lines += [f"  {escape(p)}" for p in outcome.problems]
    for run in unjournaled:
        Staging(root, run.name).discard()
        lines.append(f"discarded unpublished staging {escape(run.name)}")
    lines += [f"left for a human: {escape(p)}" for p in problems]
    return lines


def finish(root: Path, journal: Journal) -> Outcome:
    """Work through ``journal``'s steps (each idempotent), then delete it; Refused keeps the journal."""
    root = Path(root)
    _refuse_obstacles(root, f"publish {escape(journal.run)} stopped; its journal stays for the next run")
    try:
        return _steps(root, journal)
    except confine.Unsafe as exc:
        raise Refused(2, f"{exc}\nits journal stays: {escape(str(journal.run_dir))}") from None


def _steps(root: Path, journal: Journal) -> Outcome:
    journal.advance("promoting")
    journal.promote(root, journal.files)
    journal.advance("history")
    journal.promote(root, journal.history)
    journal.advance("regen")
    outputs, problems = _regen(root)
    outcome = Outcome(journal.files + journal.history, [], None, problems)
    if journal.message is not None:
        outcome.regenerated = regenerated(root, outputs, journal.files + journal.history)
        _refuse_stray(root, journal, journal.files + journal.history + outcome.regenerated)
        journal.advance("commit", regenerated=outcome.regenerated)
        outcome.commit = commit_paths(root, journal.message, journal.files + journal.history + outcome.regenerated)
    journal.advance("done", commit=outcome.commit)
    journal.finish()
    return outcome


def regenerated(root: Path, outputs: list[str], published: list[str]) -> list[str]:
    """The paths regen changed: outputs differing from HEAD and the per-entry pages it removed."""
    repo = require_repo(root)
    changed = changed_paths(repo, sorted(set(PAGE_FOLDERS) | set(outputs)))
    wanted = set(outputs)
    return sorted(p for p in changed if p not in published and
                  (p in wanted or (str(Path(p).parent) in PAGE_FOLDERS and not (root / p).exists())))


def _refuse_stray(root: Path, journal: Journal, own: list[str]) -> None:
    """Refused (journal kept, nothing committed) when published paths or the catalog hold changes
    this publish did not make: its pages were drawn from them.
    """
    dirty = set(dirty_published(root)) | set(dirty_inputs(root))
    stray = sorted(dirty - set(own) | dirty & set(journal.altered(root)))  # its own files, edited since
    if stray:
        raise Refused(2, _dirty_message(stray).replace("; nothing was measured", "") +
                      f"; publish {escape(journal.run)} is in the working tree, and is committed by the next "
                      f"--commit run once they are gone (its journal stays: {escape(str(journal.run_dir))})")


def _regen(root: Path) -> tuple[list[str], list[str]]:
    """Regenerate the pages; ``(outputs, problems)``: bad data leaves every page as it was."""
    try:
        written = regen(root)
    except (CatalogError, RecordError, HistoryError) as exc:
        return [], [f"pages not regenerated: {escape(line)}" for line in exc.errors]
    return [str(p.relative_to(root)) for p in written], []


def _refuse_obstacles(root: Path, consequence: str) -> None:
    """Refused (2) while something stands where the database is written (``confine``)."""
    try:
        confine.refuse_obstacles(root)
        confine.refuse_tracked_staging(root)
    except confine.Unsafe as exc:
        raise Refused(2, f"{exc}; {consequence}") from None


def _dirty_message(dirty: list[str]) -> str:
    shown = "\n".join(f"  {escape(p)}" for p in dirty[:40]) + (f"\n  … and {len(dirty) - 40} more" if len(dirty) > 40 else "")
    why = "".join(f"\n({escape(p)} is not published, but the pages are drawn from it)" for p in INPUTS if p in dirty)
    return ("published paths hold changes that are not committed, so a bot commit could carry them:\n"
            f"{shown}{why}\ncommit them, or discard them (git checkout / git clean), then run again; "
            "nothing was measured")
