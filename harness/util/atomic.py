"""Atomic file writes (a reader sees the old file or the new one): ``write_bytes``, ``write_text``,
``write_many``. The new file is written under a fresh name beside the target and renamed over it, so
whatever was at the target's name (a link, a fifo) is replaced, never written through or waited on.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import NamedTuple

from harness.util import forkpool


def write_bytes(path: str | os.PathLike, data: bytes, mode: int | None = None) -> Path:
    """Write ``data`` to ``path`` (``mode``: its permissions, default what the umask allows)."""
    target = Path(path)
    fd, tmp = _temp_sibling(target, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return target


def write_many(files: dict[Path, bytes]) -> list[Path]:
    """Atomic per file, one ``os.sync()`` for all; returns the paths that changed, sorted. A file is unchanged
    only when a regular file (not a link) holds exactly its bytes: anything else is replaced. Many changed
    files are staged by forked workers (:mod:`harness.util.forkpool`). On any error, here or in a worker,
    no temporary is left and none is renamed into place (unless the renaming had begun); a folder at a
    target's name is such an error, found before any file is staged."""
    # checked here: 6,000 unchanged files take ~0.1 s, less than starting the workers
    changed = [path for path in sorted(files) if not _holds(path, files[path])]
    _refuse_folders(changed)
    run = _Run(changed, files, _token())
    try:
        forkpool.map_forked(_stage, list(range(len(changed))), _FORK_LEAST, shared=run)
        if changed:
            os.sync()
        for path in changed:
            os.replace(run.temp(path), path)
    except BaseException:
        # every worker has stopped: each temporary this run could have made is known by name
        for path in changed:
            with contextlib.suppress(OSError):
                os.unlink(run.temp(path))
        raise
    return changed


# Below this many files the workers cost more than they save: starting them from regen's parent (600 MB)
# takes ~0.13 s, and 1,000 published files are staged in ~0.15 s in one process.
_FORK_LEAST = 2000


class _Run(NamedTuple):
    """The files one ``write_many`` stages, and the token naming their temporaries."""
    paths: list[Path]
    files: dict[Path, bytes]
    token: str

    def temp(self, path: Path) -> str:
        """The temporary beside ``path`` (a name ``harness.db.commit.TEMP_NAME`` matches)."""
        return os.path.join(path.parent, f".{path.name}.{self.token}.tmp")


def _stage(run: _Run, index: int) -> None:
    """Write the ``index``-th file of ``run`` to its temporary. A temporary left by an error is the caller's
    to remove."""
    path = run.paths[index]
    temp, flags = run.temp(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    try:
        fd = os.open(temp, flags, 0o600)
    except FileNotFoundError:  # its folder is missing: made by the first of its files (or by two workers at once)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temp, flags, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(fd, 0o666 & ~_UMASK)
        handle.write(run.files[path])


def _token() -> str:
    # tempfile's alphabet and length: a killed run's temporaries are what commit.sweep_temp_files removes
    return "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(8))


def _refuse_folders(paths: list[Path]) -> None:
    """IsADirectoryError naming the first of ``paths`` that is a folder (a link to one is replaced): no file
    can be renamed over it, and that rename would fail after the files sorted before it were published."""
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a folder where a file is written", str(path))


def _holds(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a regular file holding exactly ``data`` (a link is not followed, a fifo not
    waited on; a file of another size is not read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            return stat.S_ISREG(info.st_mode) and info.st_size == len(data) and handle.read(len(data) + 1) == data
    except OSError:
        return False


def _temp_sibling(target: Path, mode: int | None = None) -> tuple[int, str]:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.fchmod(fd, 0o666 & ~_UMASK if mode is None else mode)
    return fd, tmp


def _read_umask() -> int:
    # Read once at import: os.umask can only be read by setting it, which is racy across threads.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_text(path: str | os.PathLike, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))
