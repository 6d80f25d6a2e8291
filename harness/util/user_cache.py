"""The one folder the harness keeps its caches in: ``$MCP_CONTEXT_COST_CACHE``, else
``~/.cache/mcp-context-cost``. The tokenizer's rank file, the sandbox's package caches, the entries'
working directories, kept installs and regen's caches each have a folder in it (:func:`folder`; the
sweep workflow's package cache path names the default)."""

from __future__ import annotations

import os
from pathlib import Path

ENV = "MCP_CONTEXT_COST_CACHE"


def root() -> Path:
    """The cache folder as named: the environment's choice, or the default under the user's home."""
    return Path(os.environ.get(ENV) or os.path.join(os.path.expanduser("~"), ".cache", "mcp-context-cost"))


def folder(name: str) -> Path:
    """The real path of the cache's folder ``name``. Real, because sandboxed launches are shown these
    folders at their own paths, where a symbolic link on the way (``~/.cache`` on another disk) would not
    resolve."""
    return Path(os.path.realpath(root() / name))
