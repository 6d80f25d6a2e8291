"""Repairing what the measuring machine broke before a retry (methodology: a startup-failure is
retried once, because the machine rather than the server can cause it).

One such cause is observed: an ``npx`` install interrupted part-way (a killed run) leaves a
``_npx/<hash>`` directory with files missing, and every later launch of that package fails with
``Cannot find module '…/_npx/<hash>/node_modules/…'`` — npx never re-checks a directory it already
has. Before the retry, that directory is removed (only inside an npm cache: the server's own
sandbox cache, or the user's ``~/.npm``), so the retry installs afresh, and the note says so.

The path comes from the server's stderr, and under the sandbox the server writes its own cache: a
path it names is removed only when, with every symbolic link resolved, it is exactly
``<npm cache>/_npx/<hex>`` — under the sandbox inside the server's own cache — and holds no link
or ``..`` on the way (issue #9, kind 4: a link the server planted in its cache, or
``~/.npm/../../…``, once had the harness remove a host directory of the server's choosing).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from harness.probe import sandbox

_NPX_MISSING = re.compile(r"Cannot find module '([^']*?/\.npm/_npx/[0-9a-f]{8,})/")


def corrupt_npx_dirs(stderr_tail: str, isolation: str, npm_cache: Path | None = None) -> list[Path]:
    """Host paths of ``_npx/<hash>`` directories named by "Cannot find module" errors in
    ``stderr_tail``, translated out of the sandbox when ``isolation`` is ``sandbox`` (``npm_cache``:
    the host directory the sandbox saw as ``~/.npm``, i.e. ``sandbox.server_cache(...) / "npm"``)."""
    found = []
    for match in _NPX_MISSING.finditer(stderr_tail):
        seen = match.group(1)
        if isolation == "sandbox" and seen.startswith(sandbox.SANDBOX_HOME + "/.npm/"):
            if npm_cache is None:
                continue
            host = npm_cache / seen.removeprefix(sandbox.SANDBOX_HOME + "/.npm/")
        else:
            host = Path(seen)
        if host.parent.name == "_npx" and host.parent.parent.name in (".npm", "npm") and host not in found \
                and _plain(host, npm_cache if isolation == "sandbox" else None):
            found.append(host)
    return found


def _plain(path: Path, cache: Path | None) -> bool:
    """Whether ``path`` names itself: no symbolic link and no ``..`` anywhere on it (its real path
    is its absolute, normalised spelling), and, given the ``cache`` it must belong to, exactly
    ``<cache>/_npx/<name>`` there."""
    real = os.path.realpath(path)
    if real != os.path.normpath(os.path.abspath(path)) or ".." in path.parts:
        return False
    return cache is None or os.path.dirname(real) == os.path.join(os.path.realpath(cache), "_npx")


def before_retry(stderr_tail: str, isolation: str, npm_cache: Path | None = None) -> str | None:
    """Remove corrupt npx installs named in ``stderr_tail``; a note for the record, or ``None``."""
    removed = []
    for directory in corrupt_npx_dirs(stderr_tail, isolation, npm_cache):
        if directory.is_dir() and not os.path.islink(directory):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory.name)
    if not removed:
        return None
    return f"removed incomplete npx install(s) {', '.join(removed)} from the package cache before the retry"
