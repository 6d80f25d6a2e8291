"""Repairing the npm cache before an install or retry: ``before_retry`` removes an ``_npx/<hash>`` install a
"Cannot find module" error names, ``incomplete_npx_installs`` finds installs and locks not to trust,
``mark_complete`` marks a completed one. Only a plain path inside the server's npm cache is removed.
docs/SECURITY.md, "Isolation" (writable paths).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from harness.probe import sandbox

_NPX_MISSING = re.compile(r"Cannot find module '([^']*?/\.npm/_npx/[0-9a-f]{8,})/")


def corrupt_npx_dirs(stderr_tail: str, isolation: str, npm_cache: Path | None = None) -> list[Path]:
    """Host paths of ``_npx/<hash>`` directories "Cannot find module" errors in ``stderr_tail`` name, translated
    out of the sandbox."""
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
    """Whether ``path`` has no symbolic link or ``..`` on it and, given ``cache``, is exactly
    ``<cache>/_npx/<name>``."""
    real = os.path.realpath(path)
    if real != os.path.normpath(os.path.abspath(path)) or ".." in path.parts:
        return False
    return cache is None or os.path.dirname(real) == os.path.join(os.path.realpath(cache), "_npx")


def before_retry(stderr_tail: str, isolation: str, npm_cache: Path | None = None) -> str | None:
    """Remove corrupt npx installs named in ``stderr_tail``, never one marked complete; a note, or ``None``."""
    removed = []
    for directory in corrupt_npx_dirs(stderr_tail, isolation, npm_cache):
        if (directory / MARKER).is_file():
            continue  # the harness saw this install complete: a module missing from it is the package's own doing
        if directory.is_dir() and not os.path.islink(directory):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory.name)
    if not removed:
        return None
    return f"removed incomplete npx install(s) {', '.join(removed)} from the package cache before the retry"


# --- an npx install a later run must not trust ---------------------------------------------------
# npx installs a package into ``<npm cache>/_npx/<hash>/`` under npm's own lock (a
# ``concurrency.lock`` directory npm touches every second while it holds it and treats as stale only
# after 60 s), and writes that directory's ``package.json`` when the install is complete. An install
# killed part-way leaves ``node_modules`` without ``package.json`` — which every later npx run
# trusts and starts from — and a lock every later run waits a minute on.

MARKER = ".mcp-context-cost-installed"  # written into an install the harness saw complete
NPM_LOCK = "concurrency.lock"
LOCK_STALE_SECONDS = 5.0  # npm touches a lock it holds every second: one untouched for this long is dead


def npm_cache_dir(isolation: str, target_name: str, launch: str, env: dict[str, str] | None = None) -> Path:
    """The npm cache an npx launch uses: the server's own under the sandbox, else ``npm_config_cache`` or
    ``~/.npm``."""
    if isolation == "sandbox":
        return sandbox.server_cache(target_name, launch) / "npm"
    where: Mapping[str, str] = env if env is not None else os.environ
    given = where.get("npm_config_cache") or where.get("NPM_CONFIG_CACHE")
    return Path(given) if given else Path(where.get("HOME") or os.path.expanduser("~")) / ".npm"


def _lock_age(directory: Path) -> float | None:
    import time

    try:
        return time.time() - (directory / NPM_LOCK).lstat().st_mtime
    except OSError:
        return None


def incomplete_npx_installs(npm_cache: Path, exclusive: bool = False) -> list[tuple[Path, str]]:
    """``(directory, why)`` for every install in ``npm_cache`` not to trust (no final ``package.json``, a
    dependency missing) and every stale lock; live locks are skipped. ``exclusive``: the cache is the
    harness's alone, so every lock is stale and an unmarked install untrusted."""
    root = npm_cache / "_npx"
    if not _plain(root, None) or not root.is_dir():
        return []
    found: list[tuple[Path, str]] = []
    for directory in sorted(root.iterdir()):
        if os.path.islink(directory) or not directory.is_dir():
            continue
        age = _lock_age(directory)
        if age is not None and age < LOCK_STALE_SECONDS and not exclusive:
            continue  # npm is installing there right now
        why = _untrusted(directory, exclusive)
        if why:
            found.append((directory, why))
        elif age is not None:
            found.append((directory / NPM_LOCK, "stale lock"))
    return found


def _untrusted(directory: Path, marker_needed: bool) -> str | None:
    import json

    manifest = directory / "package.json"
    if not manifest.is_file():
        return "an install that never completed (node_modules without package.json)" \
            if (directory / "node_modules").exists() else None
    try:
        wanted = json.loads(manifest.read_text(encoding="utf-8")).get("dependencies") or {}
    except (OSError, ValueError, AttributeError):
        return "an unreadable package.json"
    missing = [name for name in wanted if not (directory / "node_modules" / name / "package.json").is_file()]
    if missing:
        return f"an install missing {', '.join(sorted(missing)[:3])}"
    if marker_needed and not (directory / MARKER).is_file():
        return "an install the harness never saw complete"
    return None


def discard_incomplete(npm_cache: Path, exclusive: bool = False) -> list[str]:
    """Remove what ``incomplete_npx_installs`` finds; one note per removal (``[]`` when none)."""
    notes = []
    for path, why in incomplete_npx_installs(npm_cache, exclusive):
        try:
            if why == "stale lock":
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
            else:
                shutil.rmtree(path)
        except OSError:
            continue
        what = f"npm's stale lock in {path.parent.name}" if why == "stale lock" else f"{why}, {path.name}"
        notes.append(f"discarded {what} from the package cache before installing")
    return notes


def mark_complete(bin_dir: str, isolation: str, npm_cache: Path) -> None:
    """Write ``MARKER`` into the plain ``_npx/<hash>`` install whose ``node_modules/.bin`` is ``bin_dir``."""
    seen = Path(bin_dir)
    if seen.name != ".bin" or seen.parent.name != "node_modules":
        return
    install = seen.parent.parent
    if isolation == "sandbox":
        inside = f"{sandbox.SANDBOX_HOME}/.npm/"
        if not str(install).startswith(inside):
            return
        install = npm_cache / str(install).removeprefix(inside)
    if install.parent.name != "_npx" or not _plain(install, npm_cache) or not install.is_dir():
        return
    try:
        (install / MARKER).write_text("complete\n", encoding="utf-8")
    except OSError:
        pass
