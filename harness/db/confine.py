"""Where the database may be written and read: only published paths, never through a link, only the
publisher's own journals (``obstacles``, ``in_scope``, ``tracked_staging``, ``published_owner``,
``read_bytes``; docs/OPERATIONS.md, 'Setting up and sweeping').
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath

from harness.util import bounded, names, published
from harness.util.published import PUBLISHED, STAGING_DIR
from harness.util.untrusted import escape

# Every component of a published path: server slugs and the generated files' own names.
_COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Folders whose own link would redirect a write into a published path beneath them.
_PARENTS = ("docs",)
_FOLDERS = (published.RESULTS, published.BADGES, published.SERVER_DIR, published.SPARK_DIR, published.TREND_DIR,
            STAGING_DIR)
_FILE_SUFFIXES = (".json", ".md", ".csv", ".svg", ".html")
REFUSAL = "paths where the database is written that a publish cannot write safely"


class Unsafe(ValueError):
    """A publish would write through a link or outside its scope; the message names the paths."""


def in_scope(relative: object) -> bool:
    """True for a published path, or a file beneath one, of plain-name components only."""
    if not isinstance(relative, str) or not all(_COMPONENT.fullmatch(part) for part in relative.split("/")):
        return False
    return any(relative == top or relative.startswith(top + "/") for top in PUBLISHED)


def obstacles(root: Path) -> list[tuple[str, str]]:
    """``(path, what is wrong)`` for everything where the database is written that a publish cannot
    write safely: links, special files, a folder or file where the other goes.
    """
    root = Path(root)
    found = [(top, _link(root / top)) for top in (STAGING_DIR, *_PARENTS) if (root / top).is_symlink()]
    for top in (STAGING_DIR, *PUBLISHED):
        start = root / top
        if start.is_symlink():
            found.append((top, _link(start)))
        elif start.is_dir() and top.endswith(_FILE_SUFFIXES):  # history.csv/, docs/index.html/
            found.append((top, "a folder named like a file the publisher writes"))
        elif start.is_dir():
            found += _walk(root, start)
        elif start.exists() and top in _FOLDERS:
            found.append((top, "a file where the publisher needs a folder"))
        elif start.exists() and not start.is_file():
            found.append((top, "not a regular file"))
    return sorted(set(found))


def _walk(root: Path, start: Path) -> list[tuple[str, str]]:
    found = []
    for folder, dirs, files in os.walk(start):  # os.walk never descends into a linked folder
        for name in dirs + files:
            path = Path(folder, name)
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found.append((relative, _link(path)))
            elif path.is_dir() and name.endswith(_FILE_SUFFIXES):
                found.append((relative, "a folder named like a file the publisher writes"))
            elif not path.is_dir() and not path.is_file():
                found.append((relative, "not a regular file (a fifo, socket or device)"))
            elif path.is_file() and folder == str(root / published.RESULTS) and names.is_catalog_name(name):
                found.append((relative, "a file where the publisher needs a folder (results/<name>/)"))
    return found


def refuse_obstacles(root: Path) -> None:
    """Unsafe naming what ``obstacles`` finds."""
    found = obstacles(root)
    if found:
        shown = "\n".join(f"  {escape(p)}: {escape(why)}" for p, why in found[:20])
        more = f"\n  … and {len(found) - 20} more" if len(found) > 20 else ""
        raise Unsafe(f"{REFUSAL}:\n{shown}{more}\nremove or fix them (git rm, or rm for an untracked one), then run "
                     "again")


def tracked_staging(root: Path) -> list[str]:
    """Files under ``.staging/`` that git tracks: a forged journal for the next bot sweep."""
    try:
        import git  # here: gitpython costs ~0.07 s to import, and an ad-hoc measure never needs it

        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return []
    return sorted(p for p in repo.git.ls_files("-z", "--", STAGING_DIR).split("\0") if p)


def refuse_tracked_staging(root: Path) -> None:
    """Unsafe naming what ``tracked_staging`` finds."""
    tracked = tracked_staging(root)
    if tracked:
        shown = "\n".join(f"  {escape(p)}" for p in tracked[:20]) + (f"\n  … and {len(tracked) - 20} more"
                                                                     if len(tracked) > 20 else "")
        raise Unsafe(f"git tracks files in the staging folder, which only a running publish writes:\n{shown}\n"
                     f"remove them from the repository (git rm -r {STAGING_DIR}), then run again")


def link_on_path(base: Path, relative: str) -> str | None:
    """The first component of ``base/relative`` that is a symbolic link, or None."""
    current = Path(base)
    for part in PurePosixPath(relative).parts:
        current = current / part
        if current.is_symlink():
            return str(current.relative_to(base))
    return None


def _below(base: str | bytes, path: str | bytes) -> tuple[str, list[str]] | None:
    """``(base, path's components below it)`` when ``path`` is strictly inside ``base`` and both are plain
    strings (no empty or ``.`` component: pathlib parses them to the components ``/`` splits them into);
    ``None`` otherwise."""
    if not (isinstance(base, str) and isinstance(path, str)) or not path.startswith(base + "/"):
        return None
    parts = path[len(base) + 1:].split("/")
    return (base, parts) if _plain(parts) and _plain(base.split("/")[1 if base.startswith("/") else 0:]) else None


def _plain(parts: list[str]) -> bool:
    return bool(parts) and "" not in parts and "." not in parts


def _link_below(base: str, parts: list[str]) -> str | None:
    """:func:`link_on_path` of ``base`` and the components ``parts``."""
    current = base
    for index, part in enumerate(parts):
        current = f"{current}/{part}"
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return "/".join(parts[:index + 1])
        except OSError as exc:
            if exc.errno not in _ABSENT:  # as Path.is_symlink: only these mean "not a link"
                raise
        except ValueError:
            pass
    return None


# The errors Path.is_symlink takes for "not a link".
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def published_owner(path: Path, databases: list[Path]) -> str | None:
    """The published path of ``databases`` that ``path`` (links followed) is in, or None."""
    target = Path(path).resolve()
    for root in dict.fromkeys(Path(d).resolve() for d in databases):
        try:
            relative = target.relative_to(root).as_posix()
        except ValueError:
            continue
        for top in PUBLISHED:
            if relative == top or relative.startswith(top + "/"):
                return str(root / top)
    return None


def _link(link: Path) -> str:
    try:
        return f"a symbolic link (-> {os.readlink(link)}); a publish never writes through one"
    except OSError:
        return "a symbolic link; a publish never writes through one"


def database_root(path: Path) -> Path:
    """``<root>`` of ``<root>/results/<name>/<file>`` (the file's folder for a shallower path)."""
    path = Path(path)
    return path.parents[2] if len(path.parents) > 2 else path.parent


def read_bytes(base: Path, path: Path, max_bytes: int = bounded.MAX_RECORD_BYTES) -> bytes:
    """The bytes of ``path`` inside ``base``; OSError through a link or for a non-regular file,
    ``bounded.TooLarge``, FileNotFoundError.
    """
    below = _below(os.fspath(base), os.fspath(path))
    if below is not None:  # (what the general way below finds, without parsing either path: regen reads thousands)
        link = _link_below(below[0], below[1])
    else:
        try:
            relative = Path(path).relative_to(base).as_posix()
        except ValueError:
            relative = None
        link = link_on_path(Path(base), relative) if relative else (str(path) if Path(path).is_symlink() else None)
    if link is not None:
        raise OSError(f"{link} is a symbolic link; a database reader never reads through one")
    return bounded.read_regular(path, max_bytes)
