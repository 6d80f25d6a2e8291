"""Path inputs and outputs of the Action, confined to the workspace: ``..``, outside paths and symbolic links refused.

Rule: docs/ACTION.md, "Inputs".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from harness.util.untrusted import escape
from harness.db.confine import link_on_path


def _shown(value: str, limit: int = 120) -> str:
    clipped = value if len(value) <= limit else value[: limit - 3] + "..."
    return escape(repr(clipped))


def inside(workspace: Path, base: Path, value: str, label: str, problems: list[str]) -> Path | None:
    """``value`` resolved (links followed); ``None`` and a problem naming ``label`` when outside ``workspace``."""
    try:
        resolved = (base / value).resolve()
        resolved.relative_to(workspace)
    except ValueError:
        problems.append(f"input '{label}' resolves outside the workspace (GITHUB_WORKSPACE): {_shown(value)}")
        return None
    except (OSError, RuntimeError):  # ENAMETOOLONG, a symbolic-link loop
        problems.append(f"input '{label}' cannot be resolved: {_shown(value)}")
        return None
    return resolved


class Moved(OSError):
    """An output path that resolved inside the workspace now goes through a symbolic link."""


def unmoved(workspace: Path, path: Path, label: str) -> Path:
    """``path`` when no component below the workspace is a symbolic link now; else :class:`Moved`."""
    link = link_on_path(workspace, path.relative_to(workspace).as_posix())
    if link is not None:
        raise Moved(f"the {label} path goes through a symbolic link made after the inputs were checked "
                    f"({_shown(link)}): nothing was written there")
    return path


def no_links(workdir: Path, folder: str, problems: list[str]) -> None:
    """Refuse an output ``folder`` that is, or holds, a symbolic link (it would move what the Action writes)."""
    top = workdir / folder
    found = [top] if top.is_symlink() else []
    if not found and top.is_dir():
        for root, dirs, files in os.walk(top):
            found += [Path(root, n) for n in dirs + files if Path(root, n).is_symlink()]
            if found:
                break
    if found:
        where = found[0].relative_to(workdir).as_posix()
        problems.append(f"the output folder {folder} under 'working-directory' holds a symbolic link "
                        f"({_shown(where)}); remove it")


def readable(path: Path, value: str, label: str, max_bytes: int, problems: list[str]) -> bool:
    """Whether ``path`` is a regular file of at most ``max_bytes``; else a problem naming ``label``."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        problems.append(f"input '{label}' names a file that does not exist: {_shown(value)}")
        return False
    except OSError as exc:
        problems.append(f"input '{label}' cannot be read ({exc.strerror or exc}): {_shown(value)}")
        return False
    if not stat.S_ISREG(info.st_mode):
        problems.append(f"input '{label}' is not a regular file ({kind(info.st_mode)}): {_shown(value)}")
        return False
    if info.st_size > max_bytes:
        problems.append(f"input '{label}' is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit: "
                        f"{_shown(value)}")
        return False
    return True


def writable(path: Path, value: str, label: str, problems: list[str]) -> bool:
    """Whether ``path`` is absent or a regular file; else a problem naming ``label``."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return True
    except OSError as exc:
        problems.append(f"input '{label}' cannot be written ({exc.strerror or exc}): {_shown(value)}")
        return False
    if not stat.S_ISREG(info.st_mode):
        problems.append(f"input '{label}' is not a regular file ({kind(info.st_mode)}): {_shown(value)}")
        return False
    return True


def kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"
