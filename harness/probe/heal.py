"""Repairing what the measuring machine broke before a retry (methodology: a startup-failure is
retried once, because the machine rather than the server can cause it).

One such cause is observed: an ``npx`` install interrupted part-way (a killed run) leaves a
``_npx/<hash>`` directory with files missing, and every later launch of that package fails with
``Cannot find module '…/_npx/<hash>/node_modules/…'`` — npx never re-checks a directory it already
has. Before the retry, that directory is removed (only inside an npm cache: the server's own
sandbox cache, or the user's ``~/.npm``), so the retry installs afresh, and the note says so.
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
        if host.parent.name == "_npx" and host.parent.parent.name in (".npm", "npm") and host not in found:
            found.append(host)
    return found


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
