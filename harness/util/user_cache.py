"""The one folder the harness keeps its caches in: ``$MCP_CONTEXT_COST_CACHE``, else
``~/.cache/mcp-context-cost``. The tokenizer's rank file, the sandbox's package caches, the entries'
working directories, kept installs and regen's caches each have a folder in it (:func:`folder`; the
sweep workflow's package cache path names the default)."""

from __future__ import annotations

import grp
import os
import pwd
import stat
import struct
from pathlib import Path

ENV = "MCP_CONTEXT_COST_CACHE"


def root() -> Path:
    """The cache folder as named: the environment's choice (a leading ``~`` is the user's home, as a value
    set where no shell expands it still means), or the default under the user's home."""
    return Path(os.path.expanduser(os.environ.get(ENV) or os.path.join("~", ".cache", "mcp-context-cost")))


def folder(name: str) -> Path:
    """The real path of the cache's folder ``name``. Real, because sandboxed launches are shown these
    folders at their own paths, where a symbolic link on the way (``~/.cache`` on another disk) would not
    resolve."""
    return Path(os.path.realpath(root() / name))


def real_folders() -> list[Path]:
    """The real paths of the cache folder and of every folder a link in it leads to (``work`` on another disk):
    what holds the harness's own caches."""
    where = root()
    try:
        linked = [entry.path for entry in os.scandir(where) if entry.is_symlink()]
    except OSError:
        linked = []
    return [Path(real) for real in dict.fromkeys(os.path.realpath(path) for path in [str(where), *linked])]


def problem() -> str | None:
    """Why the cache folder cannot be used (not a folder, cannot be made, not writable, or another user can write
    it or a folder linked in it), as one line naming where it was chosen, or ``None``; makes the folder when it
    is missing."""
    where = root()
    chosen = f"{ENV}={os.environ[ENV]!r}" if os.environ.get(ENV) else "the default cache folder"
    if where.exists() and not where.is_dir():
        return f"{chosen}: {where} is a file, not a folder"
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{chosen}: cannot make the cache folder {where}: {exc.strerror or exc}"
    if not os.access(where, os.W_OK | os.X_OK):
        return f"{chosen}: the cache folder {where} is not writable"
    if not os.access(where, os.R_OK):
        return f"{chosen}: the cache folder {where} is not readable"
    for real in real_folders():
        if (shared := _shared(str(real))) is not None:
            return (f"{chosen}: {shared} can be written by another user, and the harness runs and counts with what "
                    "it keeps in the cache: choose a folder only you can write")
    return None


def _shared(real: str) -> str | None:
    """The first of the real folder ``real`` and the folders above it another user could write in or rename it
    from (owned by neither this user nor root; writable by others, a group that is not this user's own or
    another user or group its ACL names, a folder above unless sticky), or ``None``. A missing ``real`` (a link in
    the cache leading nowhere yet) is judged by the first folder above it that exists, sticky or not: another user
    could make the missing folder first."""
    while not os.path.exists(real) and real != os.path.dirname(real):
        real = os.path.dirname(real)
    path = real
    while True:
        st = os.stat(path)
        if st.st_uid not in (0, os.geteuid()):
            return path
        if not (path != real and st.st_mode & stat.S_ISVTX) and (
                st.st_mode & stat.S_IWOTH or st.st_mode & stat.S_IWGRP and not _own_group(st.st_gid)
                or st.st_mode & stat.S_IWGRP and _acl_lets_others_write(path, "access")
                or _acl_lets_others_write(path, "default")):
            return path
        if path == os.path.dirname(path):
            return None
        path = os.path.dirname(path)


def _acl_lets_others_write(path: str, which: str) -> bool:
    """Whether the folder's POSIX ACL ``which`` (``access``, or ``default``: what folders made in it get) lets a
    named user other than this one, or a named group not this user's own, write."""
    try:
        raw = os.getxattr(path, f"system.posix_acl_{which}")
    except OSError:  # none, or a file system without ACLs
        return False
    for offset in range(4, len(raw) - 7, 8):
        tag, permissions, who = struct.unpack_from("<HHI", raw, offset)
        if permissions & 2 and (tag == 2 and who != os.geteuid() or tag == 8 and not _own_group(who)):
            return True
    return False


def _own_group(gid: int) -> bool:
    """Whether no user but this one belongs to the group ``gid`` (a user's private group)."""
    try:
        me = pwd.getpwuid(os.geteuid()).pw_name
        members = set(grp.getgrgid(gid).gr_mem) | {p.pw_name for p in pwd.getpwall() if p.pw_gid == gid}
    except KeyError:
        return False
    return members <= {me}
