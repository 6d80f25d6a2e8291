"""One writer per repository: ``RepoLock``, an ``flock`` the kernel drops with its holder
(docs/OPERATIONS.md, 'Setting up and sweeping').
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import stat
import sys
from pathlib import Path

from harness.util.published import STAGING_DIR
from harness.util.untrusted import escape

LOCK_FILE = "mcp-context-cost.lock"


class LockHeld(RuntimeError):
    """Another process holds the publish lock; the message names it."""


class LockUnavailable(LockHeld):
    """The lock file cannot be opened as our own regular file (read-only, or something planted)."""


class RepoLock:
    """Hold the lock for a ``with`` block; LockHeld unless ``wait``, which calls ``on_wait(holder)``
    once and blocks.
    """

    def __init__(self, root: Path, wait: bool = False, on_wait=None):
        self.path = lock_path(Path(root))
        self.wait, self.on_wait = wait, on_wait
        self._fh = None

    def __enter__(self) -> "RepoLock":
        fh = _open(self.path)
        try:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = describe_holder(self.path)
                if not self.wait:
                    raise LockHeld(f"another publish holds this repository's lock ({self.path}): {holder}; "
                                   "wait for it to finish, or pass --wait") from None
                if self.on_wait:
                    self.on_wait(holder)
                fcntl.flock(fh, fcntl.LOCK_EX)
        except BaseException:
            fh.close()
            raise
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "since": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                             "command": " ".join(sys.argv)[:300]}) + "\n")
        fh.flush()
        self._fh = fh
        return self

    def __exit__(self, *exc) -> None:
        if self._fh is not None:
            self._fh.close()  # closing the descriptor releases the flock
            self._fh = None


def _open(path: Path):
    """The lock file opened for writing, never through a link; LockUnavailable."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise LockUnavailable(f"cannot take the publish lock {path}: {exc.strerror or exc} (it must be a regular file "
                              "in a writable repository; no publish keeps a lock file when none is running, so "
                              "anything else at that path can be removed); nothing was measured") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LockUnavailable(f"cannot take the publish lock {path}: not a regular file (remove it: a publish "
                              "creates its own); nothing was measured")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "r+", encoding="utf-8")


def lock_path(root: Path) -> Path:
    """Inside the git directory, so ``git status`` never shows it."""
    import git  # here: GitPython is slow to import (and runs ``git version``); a measure outside a repository never needs it

    try:
        return Path(git.Repo(root).git_dir) / LOCK_FILE
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return root / STAGING_DIR / "LOCK"


def describe_holder(path: Path) -> str:
    """``pid N since T: command`` from the lock file, or a plain phrase."""
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
        return escape(f"pid {int(info['pid'])} since {info['since']}: {info['command']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "a process whose description is not readable"
