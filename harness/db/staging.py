"""The staging area and the publish journal: how a sweep's files reach the working tree whole, and
how an interrupted publish is finished by the next run (issue #4; issue #10, "Interrupted publishes").

A sweep writes every new file under ``.staging/<run>/`` first (mirroring the repository paths).
Publishing then writes ``.staging/<run>/JOURNAL`` atomically — the files to move, the commit message
(or none) — and works through its steps, recording each in the journal before doing it::

    promoting   records and badges renamed over their targets
    history     history.csv renamed over its target
    regen       pages regenerated from what is now on disk
    commit      the journal's files plus the regenerated ones committed (``--commit`` only)

A rename is atomic and each step is idempotent, so a run killed at any moment is finished by the
next one, which repeats the journal's steps from the start: remaining renames, regen, commit. The
journal is deleted only after the whole publish it describes is complete — never on an error or an
interrupt. A run killed before its journal exists published nothing; its staging is discarded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.db import confine
from harness.util import atomic
from harness.util.untrusted import escape

STAGING_DIR = ".staging"
JOURNAL = "JOURNAL"
STEPS = ("promoting", "history", "regen", "commit", "done")


class JournalError(ValueError):
    """A journal that cannot be read; ``str()`` names the file."""


class Staging:
    """One run's staging directory under ``root/.staging/<run>`` (or ``directory``, for a shard)."""

    def __init__(self, root: Path, run: str, directory: Path | None = None):
        self.root = Path(root)
        self.dir = Path(directory) if directory is not None else self.root / STAGING_DIR / run

    def path(self, relative: str) -> Path:
        """Where the staged copy of repository path ``relative`` lives."""
        return self.dir / relative

    def write_text(self, relative: str, text: str) -> Path:
        """Stage ``text`` for repository path ``relative`` (atomic within the staging dir)."""
        return atomic.write_text(self.path(relative), text)

    def staged(self) -> list[str]:
        """Repository-relative paths of every staged file, sorted."""
        if not self.dir.exists():
            return []
        return sorted(str(p.relative_to(self.dir)) for p in self.dir.rglob("*") if p.is_file() and p.name != JOURNAL
                      and not p.name.endswith(".tmp"))

    def begin(self, files: list[str], history: list[str], message: str | None) -> "Journal":
        """Write the journal (before anything is moved): from here on the publish is finished by
        whoever runs next, whatever happens to this process."""
        journal = Journal(self.dir, sorted(files), sorted(history), message)
        journal.digests = {r: _sha256(self.path(r)) for r in journal.files + journal.history if self.path(r).is_file()}
        journal.save()
        return journal

    def has_journal(self) -> bool:
        return (self.dir / JOURNAL).exists()

    def discard(self) -> None:
        """Delete this staging directory (only ever one without a journal: see ``Journal.finish``).
        Nothing is deleted when a link stands on the way (``.staging`` -> elsewhere: harness.db.confine)."""
        if self.dir.is_relative_to(self.root) and confine.link_on_path(self.root, str(self.dir.relative_to(self.root))):
            return
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class Journal:
    """What one publish moves and commits, and the step it has reached (``STEPS``)."""

    run_dir: Path
    files: list[str]
    history: list[str]
    message: str | None  # the commit message; None: the run does not commit
    step: str = "begun"
    regenerated: list[str] = field(default_factory=list)
    commit: str | None = None
    digests: dict[str, str] = field(default_factory=dict)  # path -> SHA-256 of the staged bytes

    def altered(self, root: Path) -> list[str]:
        """The journal's files whose bytes in the working tree are no longer the ones it staged
        (edited by hand after a crash: committing them would carry what this publish did not make).
        A journal written before digests were recorded has none to compare."""
        return sorted(r for r, digest in self.digests.items() if _sha256(Path(root) / r) != digest)

    @property
    def run(self) -> str:
        return self.run_dir.name

    def save(self) -> None:
        data = {k: v for k, v in asdict(self).items() if k != "run_dir"}
        atomic.write_text(self.run_dir / JOURNAL, json.dumps(data, indent=1) + "\n")

    def advance(self, step: str, **fields) -> None:
        """Record that the publish has reached ``step`` (one of ``STEPS``), with any new fields."""
        assert step in STEPS, step
        self.step = step
        for key, value in fields.items():
            setattr(self, key, value)
        self.save()

    def promote(self, root: Path, relatives: list[str]) -> int:
        """Rename each staged file of ``relatives`` over its target; returns how many moved (a file
        already moved before an interruption is absent from staging and skipped).

        Raises ``harness.db.confine.Unsafe`` — before anything of it moves — for a path outside the
        publish scope, a staged copy that is not a regular file, or a symbolic link on the way to
        either (the rename would land outside the repository, or carry an outside file in)."""
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
        """Staged files not yet moved."""
        return sum(1 for r in self.files + self.history if (self.run_dir / r).exists())

    def finish(self) -> None:
        """The publish is complete: remove what is left of the run, the journal last."""
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
    """The journal of ``run_dir``. A journal of the first format (a bare list of paths) reads as
    a publish of those files without a commit. Raises :class:`JournalError`."""
    path = Path(run_dir) / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JournalError(f"{path}: unreadable journal ({exc})") from None
    if isinstance(data, list):
        data = {"files": [r for r in data if r != "history.csv"], "history": [r for r in data if r == "history.csv"],
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
    bad += [r for r in journal.history if r != "history.csv"]
    if bad:
        shown = ", ".join(escape(repr(r))[:120] for r in bad[:5])
        raise JournalError(f"{path}: paths outside the published folders: {shown}")
    if not (journal.message is None or isinstance(journal.message, str)):
        raise JournalError(f"{path}: field \"message\" is not a string")
    return journal


def interrupted(root: Path) -> tuple[list[Journal], list[Path], list[str]]:
    """What interrupted runs left under ``root/.staging``, oldest run name first: journals to
    finish, staging directories without a journal (nothing of them was published: to discard),
    and one problem line per unreadable journal (its directory is left for a human)."""
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
    """Raise ``confine.Unsafe`` unless staged ``relative`` may be renamed over its target."""
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
