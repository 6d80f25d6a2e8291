"""The one folder the harness keeps its caches in: ``$MCP_CONTEXT_COST_CACHE``, else
``~/.cache/mcp-context-cost``. The tokenizer's rank file, the sandbox's package caches, the entries'
working directories, kept installs and regen's caches all live under it (the sweep workflow's
package cache path names this default)."""

from __future__ import annotations

import os
from pathlib import Path

ENV = "MCP_CONTEXT_COST_CACHE"


def root() -> Path:
    """The cache folder: the environment's choice, or the default under the user's home."""
    return Path(os.environ.get(ENV) or os.path.join(os.path.expanduser("~"), ".cache", "mcp-context-cost"))
