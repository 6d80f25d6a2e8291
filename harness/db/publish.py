"""The publish transaction, the one path by which a measurement reaches the database (``sweep``,
``sweep --merge``, ``measure --server``): ``session`` takes the lock, finishes interrupted publishes
and checks a committing run; ``Session.publish`` stages badges and history rows, writes the journal,
promotes, regenerates the pages and commits. Each step is recorded before it is done, so the next run
finishes an interrupted publish (docs/OPERATIONS.md, 'Setting up and sweeping'). The page steps come
from the caller (``PageSteps``): pages sit above db.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import git

from harness.core.record import Record
from harness.db import confine, history
from harness.db.commit import (INPUTS, changed_paths, commit_paths, dirty_inputs, dirty_published, head_record,
                               require_repo, sweep_temp_files)
from harness.db.history import HistoryError
from harness.db.lock import RepoLock
from harness.util import atomic, published, schemas
from harness.util.untrusted import escape

PAGE_FOLDERS = (published.SERVER_DIR, published.SPARK_DIR, published.TREND_DIR)  # where regen removes pages

STAGING_DIR = ".staging"
JOURNAL = "JOURNAL"
STEPS = ("promoting", "history", "regen", "commit", "done")


class JournalError(ValueError):
    """A journal that cannot be read; the message names the file."""


class Staging:
    """One run's staging directory, ``root/.staging/<run>`` (or ``directory``, for a shard)."""

    def __init__(self, root: Path, run: str, directory: Path | None = None):
        self.root = Path(root)
        self.dir = Path(directory) if directory is not None else self.root / STAGING_DIR / run

    def path(self, relative: str) -> Path:
        return self.dir / relative

    def write_text(self, relative: str, text: str) -> Path:
        return atomic.write_text(self.path(relative), text)

    def staged(self) -> list[str]:
        """Repository paths of every staged file, sorted."""
        if not self.dir.exists():
            return []
        return sorted(str(p.relative_to(self.dir)) for p in self.dir.rglob("*") if p.is_file() and p.name != JOURNAL
                      and not p.name.endswith(".tmp"))

    def begin(self, files: list[str], history: list[str], message: str | None) -> "Journal":
        """Write the journal before anything moves: from here on the next run finishes the publish."""
        journal = Journal(self.dir, sorted(files), sorted(history), message)
        journal.digests = {r: digest for r in journal.files + journal.history
                           if self.path(r).is_file() and (digest := _sha256(self.path(r))) is not None}
        journal.save()
        return journal

    def has_journal(self) -> bool:
        return (self.dir / JOURNAL).exists()

    def discard(self) -> None:
        """Delete this staging directory (never through a link)."""
        if self.dir.is_relative_to(self.root) and confine.link_on_path(self.root, str(self.dir.relative_to(self.root))):
            return
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class Journal:
    """What one publish moves and commits, and the step it has reached."""

    run_dir: Path
    files: list[str]
    history: list[str]
    message: str | None  # the commit message; None: the run does not commit
    step: str = "begun"
    regenerated: list[str] = field(default_factory=list)
    commit: str | None = None
    digests: dict[str, str] = field(default_factory=dict)  # path -> SHA-256 of the staged bytes

    def altered(self, root: Path) -> list[str]:
        """The journal's files whose working-tree bytes are no longer those it staged."""
        return sorted(r for r, digest in self.digests.items() if _sha256(Path(root) / r) != digest)

    @property
    def run(self) -> str:
        return self.run_dir.name

    def save(self) -> None:
        data = {k: v for k, v in asdict(self).items() if k != "run_dir"}
        atomic.write_text(self.run_dir / JOURNAL, json.dumps(data, indent=1) + "\n")

    def advance(self, step: str, **fields) -> None:
        """Record that the publish reached ``step``, with any new fields."""
        assert step in STEPS, step
        self.step = step
        for key, value in fields.items():
            setattr(self, key, value)
        self.save()

    def promote(self, root: Path, relatives: list[str]) -> int:
        """Rename each staged file of ``relatives`` over its target; how many moved. ``confine.Unsafe``
        before anything moves.
        """
        for relative in relatives:
            _check_move(self.run_dir, Path(root), relative)
        moved = 0
        for relative in relatives:
            staged, target = self.run_dir / relative, Path(root) / relative
            if staged.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
                moved += 1
        _fsync_dir(Path(root))
        return moved

    def pending(self) -> int:
        return sum(1 for r in self.files + self.history if (self.run_dir / r).exists())

    def finish(self) -> None:
        """Remove what is left of the run, the journal last."""
        for path in sorted(self.run_dir.rglob("*"), reverse=True):
            if path.name == JOURNAL and path.parent == self.run_dir:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        (self.run_dir / JOURNAL).unlink(missing_ok=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)


def read_journal(run_dir: Path) -> Journal:
    """The journal of ``run_dir`` (a bare list of paths reads as a publish without a commit);
    JournalError.
    """
    path = Path(run_dir) / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JournalError(f"{path}: unreadable journal ({exc})") from None
    if isinstance(data, list):
        data = {"files": [r for r in data if r != published.HISTORY], "history": [r for r in data if r == published.HISTORY],
                "message": None}
    if not isinstance(data, dict):
        raise JournalError(f"{path}: expected an object")
    try:
        journal = Journal(Path(run_dir), list(data["files"]), list(data.get("history", [])), data.get("message"),
                          data.get("step", "begun"), list(data.get("regenerated", [])), data.get("commit"),
                          dict(data.get("digests", {})))
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"{path}: missing or malformed field ({escape(exc)})") from None
    bad = [r for r in journal.files + journal.regenerated if not confine.in_scope(r)]
    bad += [r for r, d in journal.digests.items() if r not in journal.files + journal.history or not isinstance(d, str)]
    bad += [r for r in journal.history if r != published.HISTORY]
    if bad:
        shown = ", ".join(escape(repr(r))[:120] for r in bad[:5])
        raise JournalError(f"{path}: paths outside the published folders: {shown}")
    if not (journal.message is None or isinstance(journal.message, str)):
        raise JournalError(f"{path}: field \"message\" is not a string")
    return journal


def interrupted(root: Path) -> tuple[list[Journal], list[Path], list[str]]:
    """``(journals to finish, staging dirs without one, problems)`` under ``root/.staging``."""
    base = Path(root) / STAGING_DIR
    journals, unjournaled, problems = [], [], []
    if base.is_symlink():  # never glob (and empty) what a link points at
        return [], [], [f"{base}: a symbolic link, not the staging folder"]
    for run in sorted(p for p in base.glob("*") if p.is_dir()) if base.exists() else []:
        if not (run / JOURNAL).exists():
            unjournaled.append(run)
            continue
        try:
            journals.append(read_journal(run))
        except JournalError as exc:
            problems.append(str(exc))
    return journals, unjournaled, problems


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _check_move(run_dir: Path, root: Path, relative: str) -> None:
    if not confine.in_scope(relative):
        raise confine.Unsafe(f"{escape(relative)}: not a published path; the publish stops before moving anything more")
    for base, label in ((run_dir, "staged copy"), (root, "target")):
        link = confine.link_on_path(base, relative)
        if link is not None:
            raise confine.Unsafe(f"{escape(relative)}: the {label}'s path goes through the symbolic link "
                                 f"{escape(str(base / link))}; the publish stops before moving anything more")
    staged = run_dir / relative
    if staged.exists() and not staged.is_file():
        raise confine.Unsafe(f"{escape(str(staged))}: not a regular file; the publish stops before moving anything more")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class PageSteps:
    """What a publish asks of the pages layer: badges staged beside the records, and a regen."""

    stage_badges: Callable[[dict[str, Record], Path, Staging], list[str]]
    regen: Callable[[Path], list[Path]]
    errors: tuple[type[Exception], ...]  # bad data regen reports per file, each with an ``errors`` list


def stage_history(records: dict[str, Record], root: Path, staging: Staging, date: dt.date) -> tuple[list[str], list[str]]:
    """Stage ``history.csv`` with this sweep's rows; ``(staged paths, problems)``. Bad lines already
    there are kept and reported; HistoryError when the file is unusable.
    """
    rows = [history.row_for(date.isoformat(), _typed(rec)) for _, rec in sorted(records.items())]
    for row in rows:
        schemas.check("history", row, where=f"history.csv row {row['date']},{row['server']}")
    existing, bad = history.read_lenient(root / published.HISTORY)  # valid by the reader's own rules
    merged = history.merge([row.to_json() for row in existing], rows)
    text = history.render(merged, bad, validate=False)
    problems = [f"{line.problem} (kept as it is; fix it by hand)" for line in bad]
    if _read_text(root / published.HISTORY) == text:
        return [], problems
    staging.write_text(published.HISTORY, text)
    return [published.HISTORY], problems


def check_history(root: Path) -> None:
    """HistoryError when ``history.csv`` cannot take rows; checked before measuring."""
    history.check_usable(root / published.HISTORY)


def newest_dates(root: Path) -> dict[str, str]:
    """server → the newest date it has a valid history row for."""
    rows, _ = history.read_lenient(root / published.HISTORY)
    newest: dict[str, str] = {}
    for row in rows:
        newest[row.server] = max(newest.get(row.server, ""), row.date)
    return newest


def commit_message(records: dict[str, Record], repo: git.Repo | None, date: dt.date, guard_reason: str) -> str:
    """``sweep YYYY-MM-DD: N servers``, counts by status and the biggest movements against HEAD."""
    counts = Counter(rec["status"] for rec in records.values())
    lines = [f"sweep {date.isoformat()}: {len(records)} server(s) — "
             + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))]
    moves = []
    for server, rec in records.items():
        before = head_record(repo, server)
        old, new = _int((before or {}).get("totalTokens")), _int(rec["totalTokens"])
        if old is not None and new is not None and old != new:
            moves.append((abs(new - old), server, old, new))
    if moves:
        lines.append("")
        lines.append("Biggest movements:")
        for _, server, old, new in sorted(moves, key=lambda m: (-m[0], m[1]))[:5]:
            lines.append(f"  {server}: {old:,} → {new:,} tokens ({new - old:+,})")
    lines += ["", guard_reason]
    return "\n".join(lines)


def _typed(rec: Record) -> Record:
    return {**rec, "totalTokens": _int(rec["totalTokens"]), "toolCount": _int(rec["toolCount"])}


def _int(value):
    return int(value) if isinstance(value, float) else value


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None




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

    def __init__(self, root: Path, say: Callable[[str], None], pages: PageSteps) -> None:
        self.root, self.say, self.pages = Path(root), say, pages

    def publish(self, stage: Staging, records: dict[str, Record], history_records: dict[str, Record],
                staged: list[str], date: dt.date, message: str | None) -> Outcome:
        """Publish ``staged`` records with their badges and history rows; commit unless ``message``
        is None.
        """
        files = sorted(staged + self.pages.stage_badges(records, self.root, stage))
        history_files, problems = stage_history(history_records, self.root, stage, date)
        journal = stage.begin(files, history_files, message)
        outcome = finish(self.root, journal, self.pages)
        outcome.problems[:0] = [escape(p) for p in problems]  # history.csv text is committed data, not ours
        return outcome


@contextlib.contextmanager
def session(root: Path, pages: PageSteps, *, commit: bool, wait: bool = False,
            say: Callable[[str], None] = print) -> Iterator[Session]:
    """Hold the lock, recover, and refuse a committing run over uncommitted changes; LockHeld,
    NotARepository, Refused.
    """
    root = Path(root)
    _refuse_obstacles(root, "nothing was measured")  # before the lock: without a repository it lives in .staging
    with RepoLock(root, wait=wait, on_wait=lambda holder: say(f"waiting for the publish lock, held by {holder}")):
        for line in recover(root, pages):
            say(line)
        if commit:
            require_repo(root)
            dirty = sorted(set(dirty_published(root)) | set(dirty_inputs(root)))
            if dirty:
                raise Refused(2, _dirty_message(dirty))
        try:
            check_history(root)
        except HistoryError as exc:
            raise Refused(2, f"{exc}\nhistory.csv cannot take new rows; nothing was measured") from None
        yield Session(root, say, pages)


def recover(root: Path, pages: PageSteps) -> list[str]:
    """Finish or discard what interrupted runs left; one line per item."""
    root = Path(root)
    lines = [f"removed a temporary file left by an interrupted run: {escape(p)}" for p in sweep_temp_files(root)]
    journals, unjournaled, problems = interrupted(root)
    for journal in journals:
        pending, step = journal.pending(), journal.step
        outcome = finish(root, journal, pages)
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


def finish(root: Path, journal: Journal, pages: PageSteps) -> Outcome:
    """Work through ``journal``'s steps (each idempotent), then delete it; Refused keeps the journal."""
    root = Path(root)
    _refuse_obstacles(root, f"publish {escape(journal.run)} stopped; its journal stays for the next run")
    try:
        return _steps(root, journal, pages)
    except confine.Unsafe as exc:
        raise Refused(2, f"{exc}\nits journal stays: {escape(str(journal.run_dir))}") from None


def _steps(root: Path, journal: Journal, pages: PageSteps) -> Outcome:
    journal.advance("promoting")
    journal.promote(root, journal.files)
    journal.advance("history")
    journal.promote(root, journal.history)
    journal.advance("regen")
    outputs, problems = _regen(root, pages)
    outcome = Outcome(journal.files + journal.history, [], None, problems)
    if journal.message is not None:
        outcome.regenerated = regenerated(root, outputs, journal.files + journal.history)
        _refuse_stray(root, journal, journal.files + journal.history + outcome.regenerated)
        journal.advance("commit", regenerated=outcome.regenerated)
        outcome.commit = commit_paths(root, journal.message, journal.files + journal.history + outcome.regenerated)
    journal.advance("done", commit=outcome.commit)
    journal.finish()
    return outcome


def regenerated(root: Path, outputs: list[str], moved: list[str]) -> list[str]:
    """The paths regen changed: outputs differing from HEAD and the per-entry pages it removed."""
    repo = require_repo(root)
    changed = changed_paths(repo, sorted(set(PAGE_FOLDERS) | set(outputs)))
    wanted = set(outputs)
    return sorted(p for p in changed if p not in moved and
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


def _regen(root: Path, pages: PageSteps) -> tuple[list[str], list[str]]:
    """Regenerate the pages; ``(outputs, problems)``: bad data leaves every page as it was."""
    try:
        written = pages.regen(root)
    except pages.errors as exc:
        return [], [f"pages not regenerated: {escape(line)}" for line in getattr(exc, "errors", [str(exc)])]
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
