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
from collections.abc import Mapping
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
    """Remove corrupt npx installs named in ``stderr_tail`` — never one marked complete (``MARKER``),
    whose missing module is the package's own failure; a note for the record, or ``None``."""
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
    """The npm cache an npx launch of this target uses: the server's own under the sandbox, else
    the child's ``npm_config_cache`` setting or ``~/.npm``."""
    if isolation == "sandbox":
        return sandbox.server_cache(target_name, launch) / "npm"
    where: Mapping[str, str] = env if env is not None else os.environ
    given = where.get("npm_config_cache") or where.get("NPM_CONFIG_CACHE")
    return Path(given) if given else Path(where.get("HOME") or os.path.expanduser("~")) / ".npm"


def _lock_age(directory: Path) -> float | None:
    """Seconds since npm last touched ``directory``'s lock, or ``None`` when there is none."""
    import time

    try:
        return time.time() - (directory / NPM_LOCK).lstat().st_mtime
    except OSError:
        return None


def incomplete_npx_installs(npm_cache: Path, exclusive: bool = False) -> list[tuple[Path, str]]:
    """``(directory, why)`` for every ``_npx/<hash>`` install in ``npm_cache`` a run must not trust,
    skipping those whose npm lock is live (an install under way): ``node_modules`` without the
    ``package.json`` npm writes last, a dependency ``package.json`` names that is not installed;
    and ``(lock, "stale lock")`` for a lock nobody holds any more. ``exclusive``: the cache is the
    harness's alone and the caller holds its install lock (a sandboxed server's cache), so every npm
    lock in it is stale and an install without ``MARKER`` was never seen complete."""
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
    """Write ``MARKER`` into the ``_npx/<hash>`` install whose ``node_modules/.bin`` is ``bin_dir``
    (as the resolution saw it: inside the sandbox, ``~/.npm/…``), once the harness has seen it
    complete. Anything that is not plainly such a directory in ``npm_cache`` is left alone."""
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
