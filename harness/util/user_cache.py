"""The one folder the harness keeps its caches in: ``$MCP_CONTEXT_COST_CACHE``, else
``~/.cache/mcp-context-cost``. The tokenizer's rank file, the sandbox's package caches, the entries'
working directories, kept installs and regen's caches each have a folder in it (:func:`folder`; the
sweep workflow's package cache path names the default)."""

from __future__ import annotations

import os
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


def problem() -> str | None:
    """Why the cache folder cannot be used (not a folder, cannot be made, not writable), as one line naming
    where it was chosen, or ``None``; makes the folder when it is missing."""
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
    return None
