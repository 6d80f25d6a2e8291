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
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp creates 0600; published files are ordinary files
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


def _read_umask() -> int:
    # Read once at import: os.umask can only be read by setting it, which is racy across threads.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically (see ``write_bytes``)."""
    return write_bytes(path, text.encode("utf-8"))
