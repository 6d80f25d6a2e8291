"""The one path by which a measurement reaches the database (issue #10): ``sweep`` (and
``sweep --merge``) and ``measure --server`` all publish through here.

    with publisher.session(root, commit=True, wait=False, say=print) as run:   # lock, recover, checks
        ... measure into a Staging ...
        outcome = run.publish(stage, result, date, message)                      # journal, steps, commit

``session`` takes the repository lock (``harness.db.lock``; a second publisher exits 2 naming the
holder, or waits), removes temporary files a killed run left, finishes every interrupted publish
that has a journal (its remaining renames, regen, and its commit when it was a committing run) and
discards staging that never got one. For a committing run it then refuses — before anything is
measured — when the published paths hold changes nobody committed (:class:`Refused`, naming them),
and when ``history.csv`` could not take a row at all.

``publish`` stages badges and history, writes the journal, and works through its steps (see
``harness.db.staging``): promote records and badges, promote history.csv, regenerate the pages,
commit exactly the journal's files plus the pages regen changed. Bad committed data met on the way
— a malformed history line, an unreadable record of another server that stops regen — is reported
per file (``Outcome.problems``) and never stops the rest from being published.
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
from harness.pages.published_records import RecordError
from harness.pages.regen import regen
from harness.util.published import SERVER_DIR, SPARK_DIR, TREND_DIR
from harness.util.untrusted import escape


PAGE_FOLDERS = (SERVER_DIR, SPARK_DIR, TREND_DIR)  # where regen removes the pages of entries that left


class Refused(Exception):
    """The run must not go on; ``code`` is the exit code, ``str()`` says why."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


@dataclass
class Outcome:
    """What one publish did: ``files`` (records, badges, history.csv moved into place),
    ``regenerated`` (pages regen changed), ``commit`` (its sha, or ``None``) and ``problems``
    (bad committed data met on the way, one line per file or line)."""

    files: list[str] = field(default_factory=list)
    regenerated: list[str] = field(default_factory=list)
    commit: str | None = None
    problems: list[str] = field(default_factory=list)


class Session:
    """A held publish lock on one repository (see module doc)."""

    def __init__(self, root: Path, say):
        self.root, self.say = Path(root), say

    def publish(self, stage: Staging, records: dict[str, dict], history_records: dict[str, dict],
                staged: list[str], date: dt.date, message: str | None) -> Outcome:
        """Publish ``staged`` records plus the badges of ``records`` and the history rows of
        ``history_records``; commit with ``message`` unless it is ``None``."""
        files = sorted(staged + stage_badges(records, self.root, stage))
        history, problems = recording.stage_history(history_records, self.root, stage, date)
        journal = stage.begin(files, history, message)
        outcome = finish(self.root, journal)
        outcome.problems[:0] = [escape(p) for p in problems]  # history.csv text is committed data, not ours
        return outcome


@contextlib.contextmanager
def session(root: Path, *, commit: bool, wait: bool = False, say=print):
    """Hold the lock, recover, and check a committing run's preconditions (see module doc).

    Raises ``harness.db.lock.LockHeld``, ``harness.db.commit.NotARepository`` or :class:`Refused`."""
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
    """Finish or discard what interrupted runs left (see module doc); one human line per item."""
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
    """Work through ``journal``'s steps from the first (each is idempotent), then delete it.

    Raises :class:`Refused` (the journal stays) while a symbolic link stands where the database is
    written, or when the journal names a path outside the published folders."""
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
    """The paths regen changed: its outputs that differ from HEAD, and the pages regen removed
    (deleted from a folder of per-entry pages: ``harness.pages.regen`` removes stale ones there and
    nowhere else — a record deleted by hand is not regen's). Anything else is not this publish's."""
    repo = require_repo(root)
    changed = changed_paths(repo, sorted(set(PAGE_FOLDERS) | set(outputs)))
    wanted = set(outputs)
    return sorted(p for p in changed if p not in published and
                  (p in wanted or (str(Path(p).parent) in PAGE_FOLDERS and not (root / p).exists())))


def _refuse_stray(root: Path, journal: Journal, own: list[str]) -> None:
    """Raise :class:`Refused` (the journal stays, its files published, nothing committed) when the
    published paths or the catalog hold changes this publish did not make. The pages were drawn from
    them, so a commit of the pages alone would say what no commit holds — a record deleted by hand
    after a crash once went out as pages without that server. (Checked before measuring too, but a
    recovery runs first, and a sweep measures for minutes.)"""
    dirty = set(dirty_published(root)) | set(dirty_inputs(root))
    stray = sorted(dirty - set(own) | dirty & set(journal.altered(root)))  # its own files, edited since
    if stray:
        raise Refused(2, _dirty_message(stray).replace("; nothing was measured", "") +
                      f"; publish {escape(journal.run)} is in the working tree, and is committed by the next "
                      f"--commit run once they are gone (its journal stays: {escape(str(journal.run_dir))})")


def _regen(root: Path) -> tuple[list[str], list[str]]:
    """Regenerate the pages; ``(outputs written, problems)``. Bad data on disk (an unreadable record,
    a malformed history line, a broken catalog) leaves every page as it was and is reported per
    file: the records, badges and history already published stay published."""
    try:
        written = regen(root)
    except (CatalogError, RecordError, HistoryError) as exc:
        return [], [f"pages not regenerated: {escape(line)}" for line in exc.errors]
    return [str(p.relative_to(root)) for p in written], []


def _refuse_obstacles(root: Path, consequence: str) -> None:
    """Raise :class:`Refused` (2) while a symbolic link (or a folder, fifo … where a file goes) stands
    where the database is written (``harness.db.confine``): a rename, a regen or a discard would act
    outside the repository, or fail halfway and again at every recovery."""
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
