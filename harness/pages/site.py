"""Links between published files and the labels every page shares: ``link``, ``METHODOLOGY_LABEL``.

Paths are in :mod:`harness.util.published`. Links are relative, so the files work on GitHub, on
GitHub Pages and from a checkout.
"""

from __future__ import annotations

import functools
import posixpath

METHODOLOGY_LABEL = "methodology 1.0"
COST_MOVEMENT_ANCHOR = "cost-movement"  # the "## Cost movement" heading of a server page


def link(from_file: str, to_file: str) -> str:
    """Relative link from one published file to another (both repository-relative, POSIX): exactly
    ``posixpath.relpath(to_file, dirname(from_file) or ".")``, its folders' part remembered per pair of
    folders (every page links to other files; relpath reads the working directory each call)."""
    start = posixpath.dirname(from_file) or "."
    head, base = posixpath.split(to_file)
    if base in ("", ".", ".."):
        return posixpath.relpath(to_file, start)
    up, down = _between(start, head or ".")
    if base == down:  # the target is on the way from start up to the common folder: relpath decides
        return posixpath.relpath(to_file, start)
    return base if up == "." else f"{up}/{base}"


@functools.lru_cache(maxsize=4096)
def _between(start: str, folder: str) -> tuple[str, str | None]:
    """``(relpath(folder, start), the first component of relpath(start, folder))``, the second only when
    ``folder`` is a folder above ``start`` (a name there, followed by relpath, climbs back down)."""
    up = posixpath.relpath(folder, start)
    if up == "." or any(part != posixpath.pardir for part in up.split(posixpath.sep)):
        return up, None
    return up, posixpath.relpath(start, folder).split(posixpath.sep)[0]
