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
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import git

from harness.core.record import Record
from harness.db import confine, history
from harness.db.commit import (INPUTS, changed_paths, commit_paths, dirty_inputs, dirty_published, head_record,
                               require_repo, sweep_temp_files)
from harness.db.history import HistoryError
from harness.db.journal import Journal, Staging, interrupted
from harness.db.lock import RepoLock
from harness.util import published, schemas
from harness.util.untrusted import escape

PAGE_FOLDERS = (published.SERVER_DIR, published.SPARK_DIR, published.TREND_DIR)  # where regen removes pages


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
