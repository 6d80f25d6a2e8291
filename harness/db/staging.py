"""The staging area and the publish journal: how a sweep's files reach the working tree whole.

A sweep writes every new file under ``.staging/<run>/`` first (mirroring the repository paths).
Publishing then (1) writes ``.staging/<run>/JOURNAL`` atomically — the list of files to move —
and (2) renames each staged file over its target. A rename is atomic, and the journal makes the
set of renames restartable: a sweep killed before the journal exists leaves the published files
untouched (the next sweep deletes the stale staging directory); one killed after it is rolled
forward by the next sweep (``recover``), so the working tree ends up all-new, never a mix.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from harness.util import atomic

STAGING_DIR = ".staging"
JOURNAL = "JOURNAL"


class Staging:
    """One sweep's staging directory under ``root/.staging/<run>``."""

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

    def promote(self, relatives: list[str]) -> list[Path]:
        """Journal, then move each staged file over its target; returns the targets."""
        atomic.write_text(self.dir / JOURNAL, json.dumps(sorted(relatives)))
        return _roll_forward(self.root, self.dir)

    def discard(self) -> None:
        """Delete this staging directory."""
        shutil.rmtree(self.dir, ignore_errors=True)


def recover(root: Path) -> list[str]:
    """Finish or discard what an interrupted sweep left under ``root/.staging``.

    A run with a journal is rolled forward (its remaining renames are done); a run without one is
    deleted. Returns one human line per run handled.
    """
    base = Path(root) / STAGING_DIR
    done = []
    for run in sorted(p for p in base.glob("*") if p.is_dir()) if base.exists() else []:
        if (run / JOURNAL).exists():
            pending = [r for r in json.loads((run / JOURNAL).read_text()) if (run / r).exists()]
            _roll_forward(Path(root), run)
            done.append(f"recovered interrupted publish {run.name}: {len(pending)} file(s) rolled forward")
        else:
            done.append(f"discarded unpublished staging {run.name}")
        shutil.rmtree(run, ignore_errors=True)
    return done


def _roll_forward(root: Path, run_dir: Path) -> list[Path]:
    relatives = json.loads((run_dir / JOURNAL).read_text())
    targets = []
    for relative in relatives:
        staged, target = run_dir / relative, root / relative
        if staged.exists():  # absent = already moved before an interruption
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target)
        targets.append(target)
    _fsync_dir(root)
    return targets


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
