"""One writer per repository: the publish lock (issue #10, "Interrupted publishes").

Every command that writes the database — ``sweep`` (also ``--merge``) and ``measure --server`` —
holds an exclusive ``flock`` on ``mcp-context-cost.lock`` in the repository's git directory (or on
``<root>/.staging/LOCK`` when ``root`` is not a repository) from before it recovers an interrupted
publish until its own publish (and commit) is complete. A second one either exits with
:class:`LockHeld` naming the holder, or, asked to wait, blocks until the holder is done. The kernel
drops the lock when its process ends however it ends (SIGKILL included), so a lock is never stale;
the holder's description in the file is only for the message.

``sweep --shard`` takes no lock: it writes only its own ``--out`` directory.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import stat
import sys
from pathlib import Path

import git

from harness.util.untrusted import escape

LOCK_FILE = "mcp-context-cost.lock"
STAGING_DIR = ".staging"


class LockHeld(RuntimeError):
    """Another process holds the repository's publish lock; ``str()`` names it."""


class LockUnavailable(LockHeld):
    """The lock file cannot be opened as a regular file of our own — a read-only repository, or
    something else (a folder, a symbolic link, a pipe) planted at its path; ``str()`` says which."""


class RepoLock:
    """``with RepoLock(root, wait=False, on_wait=print):`` — hold the lock for the block.

    Raises :class:`LockHeld` on entry when ``wait`` is false and another process holds it; with
    ``wait`` true, calls ``on_wait(holder)`` once and blocks until it is free."""

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
    """The lock file opened for writing, never through a link (the holder's description truncates
    it: through a planted link that would empty someone else's file). Raises :class:`LockUnavailable`."""
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
    """Where ``root``'s lock lives: inside its git directory, so ``git status`` never shows it."""
    try:
        return Path(git.Repo(root).git_dir) / LOCK_FILE
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return root / STAGING_DIR / "LOCK"


def describe_holder(path: Path) -> str:
    """``pid N since T: command`` from the lock file, or a plain phrase when it cannot be read."""
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
        return escape(f"pid {int(info['pid'])} since {info['since']}: {info['command']}")
    except (OSError, ValueError, KeyError, TypeError):
        return "a process whose description is not readable"
