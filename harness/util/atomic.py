"""Atomic file writes: a reader sees the old file or the new one, never a truncated mix.

Rule of the project ("Bad input ... never a half-written file"): every published file is written
to a temporary file in the same directory, flushed and fsync'ed, then renamed over the target.
``os.replace`` is atomic on POSIX within one filesystem.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; create parent directories.

    Returns the target path. Raises ``OSError`` from the filesystem; on any error the temporary
    file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    fd, tmp = _temp_sibling(target)
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
    """Write ``{path: bytes}`` with one flush to disk; returns the paths that changed (sorted).

    ``write_bytes`` fsyncs every file, right for one record and costly for three thousand pages.
    Here every changed file is written in full to a temporary sibling, ``os.sync()`` flushes them
    all once, and only then is each renamed over its target — so, per file, a reader sees the old
    bytes or the new ones, and a failure while writing (a full disk) removes the temporaries and
    leaves every target as it was. A file whose bytes are already right is not touched.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path in sorted(files):
            data = files[path]
            try:
                if path.read_bytes() == data:
                    continue
            except OSError:
                pass
            fd, tmp = _temp_sibling(path)
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


def _temp_sibling(target: Path) -> tuple[int, str]:
    """An open temporary file next to ``target`` (same filesystem, so the rename is atomic), with
    the permissions an ordinary new file gets (mkstemp alone creates 0600)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.fchmod(fd, 0o666 & ~_UMASK)
    return fd, tmp


def _read_umask() -> int:
    # Read once at import: os.umask can only be read by setting it, which is racy across threads.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically (see ``write_bytes``)."""
    return write_bytes(path, text.encode("utf-8"))
