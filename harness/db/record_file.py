"""Reading a database file: never through a link, a regular file only, bounded in bytes."""

from __future__ import annotations

from pathlib import Path

from harness.db.confine import link_on_path
from harness.util import bounded


def database_root(path: Path) -> Path:
    """``<root>`` of ``<root>/results/<name>/<file>`` (the file's folder for a shallower path)."""
    path = Path(path)
    return path.parents[2] if len(path.parents) > 2 else path.parent


def read_bytes(base: Path, path: Path, max_bytes: int = bounded.MAX_RECORD_BYTES) -> bytes:
    """The bytes of ``path`` inside ``base``; OSError through a link or for a non-regular file,
    ``bounded.TooLarge``, FileNotFoundError.
    """
    try:
        relative = Path(path).relative_to(base).as_posix()
    except ValueError:
        relative = None
    link = link_on_path(Path(base), relative) if relative else (str(path) if Path(path).is_symlink() else None)
    if link is not None:
        raise OSError(f"{link} is a symbolic link; a database reader never reads through one")
    return bounded.read_regular(path, max_bytes)
