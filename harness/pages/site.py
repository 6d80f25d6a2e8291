"""Links between published files and the labels every page shares: ``link``, ``METHODOLOGY_LABEL``.

Paths are in :mod:`harness.util.published`. Links are relative, so the files work on GitHub, on
GitHub Pages and from a checkout.
"""

from __future__ import annotations

import functools
import posixpath

METHODOLOGY_LABEL = "methodology 1.0"
COST_MOVEMENT_ANCHOR = "cost-movement"  # the "## Cost movement" heading of a server page


@functools.lru_cache(maxsize=65536)
def link(from_file: str, to_file: str) -> str:
    """Relative link from one published file to another (both repository-relative, POSIX)."""
    return posixpath.relpath(to_file, posixpath.dirname(from_file) or ".")
