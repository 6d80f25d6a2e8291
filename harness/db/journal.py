"""A publish's staging directory and journal: ``Staging`` holds one run's files until they are
promoted; ``Journal`` records what the publish moves and the step it has reached, so the next run
finishes an interrupted one (``harness.db.publish``); ``interrupted`` finds them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.db import confine
from harness.util import atomic, published
from harness.util.published import STAGING_DIR
from harness.util.untrusted import escape

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
