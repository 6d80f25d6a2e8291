"""Reading one file of a database (a repository's ``results/``, a shard's folder): never through a
symbolic link, a regular file only, bounded in bytes — the rules the publisher writes by
(``harness.db.confine``). A committed link would make a reader publish, or quote, whatever file it
points at."""

from __future__ import annotations

from pathlib import Path

from harness.db.confine import link_on_path
from harness.util import bounded


def database_root(path: Path) -> Path:
    """The database folder of ``<root>/results/<name>/<file>``: ``<root>`` (the file's own folder
    for a path not that deep)."""
    path = Path(path)
    return path.parents[2] if len(path.parents) > 2 else path.parent


def read_bytes(base: Path, path: Path, max_bytes: int = bounded.MAX_RECORD_BYTES) -> bytes:
    """The bytes of ``path`` (inside the database folder ``base``). Raises ``OSError`` naming the
    link when ``path`` or a folder between ``base`` and it is a symbolic link, or when it is not a
    regular file; ``bounded.TooLarge`` over ``max_bytes``; ``FileNotFoundError`` when absent."""
    try:
        relative = Path(path).relative_to(base).as_posix()
    except ValueError:
        relative = None
    link = link_on_path(Path(base), relative) if relative else (str(path) if Path(path).is_symlink() else None)
    if link is not None:
        raise OSError(f"{link} is a symbolic link; a database reader never reads through one")
    return bounded.read_regular(path, max_bytes)
