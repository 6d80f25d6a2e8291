"""The npx installs in an npm cache a later run may trust: npm writes an install's ``package.json`` last and
holds a lock while it works, the harness marks an install it saw complete, and everything else is discarded
before a launch. Also which installs a launch's "Cannot find module" error shows broken.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Mapping
from pathlib import Path

from harness.probe import sandbox
from harness.util import atomic


# Node's two wordings: CommonJS quotes the missing path; ESM names the missing module or package and
# the file that imported it ("Cannot find package 'x' imported from /…/_npx/<hash>/…").
_NPX_MISSING = re.compile(r"Cannot find (?:module|package) '([^']*?/\.npm/_npx/[0-9a-f]{8,})/"
                          r"|Cannot find (?:module|package) '[^'\n]*' imported from (/[^\s']*?/\.npm/_npx/[0-9a-f]{8,})/")


def corrupt_npx_dirs(stderr_tail: str, isolation: str, npm_cache: Path | None = None) -> list[Path]:
    """Host paths of ``_npx/<hash>`` directories "Cannot find module" errors in ``stderr_tail`` name, translated
    out of the sandbox."""
    found = []
    for match in _NPX_MISSING.finditer(stderr_tail):
        seen = match.group(1) or match.group(2)
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
    """Whether ``path`` has no link or ``..`` on it and is exactly ``<cache>/_npx/<name>``."""
    real = os.path.realpath(path)
    if real != os.path.normpath(os.path.abspath(path)) or ".." in path.parts:
        return False
    return cache is None or os.path.dirname(real) == os.path.join(os.path.realpath(cache), "_npx")


def before_retry(stderr_tail: str, isolation: str, npm_cache: Path | None = None) -> str | None:
    """Remove corrupt npx installs named in ``stderr_tail``, never one marked complete; a note, or ``None``."""
    removed = []
    for directory in corrupt_npx_dirs(stderr_tail, isolation, npm_cache):
        if marked_complete(directory):
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
# The install procedure's version, written into MARKER: bump it whenever installs an earlier procedure made
# may lack something (their dependencies' install scripts never ran, a file npm could not write for want of
# space, say) so that every one is redone.
PROCEDURE = 3
MARKER_TEXT = f"complete by install procedure {PROCEDURE}\n"
MARKER_BYTES = 256  # a marker's text is read at most this far
MANIFEST_BYTES = 1 << 20  # an install's package.json larger than this is not npm's
LOCKFILE_BYTES = 16 << 20  # an install's package-lock.json larger than this is not npm's
NPM_LOCK = "concurrency.lock"
# npm touches a lock it holds every second and takes one over only after it is 60 s untouched. In a cache
# shared with processes the harness does not own (the host's), a lock is judged by npm's own rule: a
# loaded machine can stall a live npm for seconds, and its install must not be taken from under it.
LOCK_STALE_SECONDS = 60.0


def npm_cache_dir(isolation: str, target_name: str, launch: str, env: dict[str, str] | None = None) -> Path:
    """The npm cache an npx launch uses: the server's own under the sandbox, else ``npm_config_cache`` or
    ``~/.npm``."""
    if isolation == "sandbox":
        return sandbox.server_cache(target_name, launch) / "npm"
    where: Mapping[str, str] = env if env is not None else os.environ
    given = where.get("npm_config_cache") or where.get("NPM_CONFIG_CACHE")
    return Path(given) if given else Path(where.get("HOME") or os.path.expanduser("~")) / ".npm"


def _lock_age(directory: Path) -> float | None:

    try:
        return time.time() - (directory / NPM_LOCK).lstat().st_mtime
    except OSError:
        return None


def incomplete_npx_installs(npm_cache: Path, exclusive: bool = False) -> list[tuple[Path, str]]:
    """``(path, why)`` for every install or lock in ``npm_cache`` not to trust; with ``exclusive`` every lock is
    stale and an unmarked install untrusted."""
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
        why = untrusted_reason(directory, exclusive)
        if why:
            found.append((directory, why))
        elif age is not None:
            found.append((directory / NPM_LOCK, "stale lock"))
    return found


def untrusted_reason(directory: Path, marker_needed: bool) -> str | None:

    manifest = directory / "package.json"
    if not os.path.lexists(manifest):
        return "an install that never completed (node_modules without package.json)" \
            if (directory / "node_modules").exists() else None
    text = plain_text(manifest, MANIFEST_BYTES)
    try:
        wanted = json.loads(text).get("dependencies") or {} if text is not None else None
    except (ValueError, AttributeError):
        wanted = None
    if not isinstance(wanted, dict):
        return "an unreadable package.json"
    missing = [name for name in wanted if not (directory / "node_modules" / name / "package.json").is_file()]
    if missing:
        return f"an install missing {', '.join(sorted(missing)[:3])}"
    marker = _marker(directory)
    if marker is not None and marker != MARKER_TEXT:
        return "an install made by another install procedure"
    if marker_needed and marker is None:
        return "an install the harness never saw complete"
    return None


def _marker(directory: Path) -> str | None:
    """The text of ``directory``'s ``MARKER`` (``""`` when it is not a plain readable file), ``None`` when absent."""
    path = directory / MARKER
    if not os.path.lexists(path):
        return None
    text = plain_text(path, MARKER_BYTES, cut=True)
    return "" if text is None else text


def plain_text(path: Path, limit: int, cut: bool = False) -> str | None:
    """``path``'s text when it is a regular file, not a link, of at most ``limit`` bytes (``cut``: its first
    ``limit`` bytes); ``None`` otherwise. Never blocks on a fifo or follows a link out of the cache."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit + 1)
        if len(data) > limit and not cut:
            return None
        return data[:limit].decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def marked_complete(directory: Path) -> bool:
    """Whether ``directory`` holds this install procedure's ``MARKER``."""
    return _marker(directory) == MARKER_TEXT


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


def install_dir(bin_dir: str, isolation: str, npm_cache: Path) -> Path | None:
    """The host path of the plain ``_npx/<hash>`` install whose ``node_modules/.bin`` is ``bin_dir``, or ``None``."""
    seen = Path(bin_dir)
    if seen.name != ".bin" or seen.parent.name != "node_modules":
        return None
    install = seen.parent.parent
    if isolation == "sandbox":
        inside = f"{sandbox.SANDBOX_HOME}/.npm/"
        if not str(install).startswith(inside):
            return None
        install = npm_cache / str(install).removeprefix(inside)
    if install.parent.name != "_npx" or not _plain(install, npm_cache) or not install.is_dir():
        return None
    return install


def discard_install(bin_dir: str, isolation: str, npm_cache: Path) -> None:
    """Remove the plain ``_npx/<hash>`` install whose ``node_modules/.bin`` is ``bin_dir``."""
    install = install_dir(bin_dir, isolation, npm_cache)
    if install is not None:
        shutil.rmtree(install, ignore_errors=True)


def mark_complete(bin_dir: str, isolation: str, npm_cache: Path) -> None:
    """Write ``MARKER`` into the plain ``_npx/<hash>`` install whose ``node_modules/.bin`` is ``bin_dir``."""
    install = install_dir(bin_dir, isolation, npm_cache)
    if install is None:
        return
    # written beside and renamed over: whatever the package left at the marker's name (a link out of the
    # cache, a fifo) is replaced, never written through or waited on
    with contextlib.suppress(OSError):
        atomic.write_bytes(install / MARKER, MARKER_TEXT.encode("utf-8"), mode=0o644)
