"""Atomic file writes (a reader sees the old file or the new one): ``write_bytes``, ``write_text``,
``write_many``. The new file is written under a fresh name beside the target and renamed over it, so
whatever was at the target's name (a link, a fifo) is replaced, never written through or waited on.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


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
    """Atomic per file, one ``os.sync()`` for all; returns the paths that changed. A file is unchanged
    only when a regular file (not a link) holds exactly its bytes: anything else is replaced."""
    staged: list[tuple[str, Path]] = []
    made: set[Path] = set()  # folders known to exist: one mkdir per folder, not per file
    try:
        for path in sorted(files):
            data = files[path]
            if _holds(path, data):
                continue
            fd, tmp = _temp_sibling(path, made=made)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        if staged:
            os.sync()
    except BaseException:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    return [path for _, path in staged]


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


def _temp_sibling(target: Path, mode: int | None = None, made: set[Path] | None = None) -> tuple[int, str]:
    if made is None or target.parent not in made:
        target.parent.mkdir(parents=True, exist_ok=True)
        if made is not None:
            made.add(target.parent)
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
