"""Install an ``npx``/``uvx`` package once before any launch is timed, and repair the npm cache a broken run
left. docs/METHODOLOGY.md, "Installing is not measuring".
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.probe import machine_fault, node_engine, npmlog, npx_cache, redact, resolve, sandbox, server_env, warm_install
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target
from harness.util import user_cache

INSTALL_VARIABLE = "MCP_CONTEXT_COST_INSTALL_TIMEOUT"
DEFAULT_SECONDS = 300.0
PHASE = "install"


@dataclass(frozen=True)
class Install:
    """What installing gave: ``target``, ``failures``, ``notes`` and ``findings``."""

    target: Target
    failures: tuple[Capture, ...] = ()
    notes: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    seconds: float = 0.0
    locked: bool = False  # the last failure: another process held this cache's install lock throughout


def bound_seconds() -> float:
    """The install's own bound in seconds (``INSTALL_VARIABLE``, else ``DEFAULT_SECONDS``)."""
    try:
        value = float(os.environ.get(INSTALL_VARIABLE, ""))
    except ValueError:
        return DEFAULT_SECONDS
    return value if value > 0 else DEFAULT_SECONDS


async def install(target: Target, isolation: str = "host", *, pass_declared_values: bool = True,
                  environ: Mapping[str, str] | None = None, requested_version: str = "") -> Install:
    """Install ``target``'s package once; ``Install(target)`` unchanged when there is nothing to install here."""
    how = resolve.plan(target.command) if target.command else None
    if not resolve.enabled() or target.resolved is not None or how is None or target.cwd is not None \
            or isolation not in ("host", "sandbox"):
        return Install(target)
    bound = bound_seconds()
    started = time.monotonic()
    npm_cache = _npm_cache(target, isolation, environ) if how.launcher == "npx" else None
    notes: list[str] = []
    failures: list[Capture] = []
    try:
        async with _exclusive(_lock_path(target, isolation), started + bound):
            for attempt in range(2):
                notes += _discard(npm_cache, isolation)
                ready = warm_install.ready(target, isolation, pass_declared_values, environ) if npm_cache is not None else None
                if attempt == 0 and ready is not None and npm_cache is not None \
                        and (warm := warm_install.installed(target, isolation, *ready, npm_cache)) is not None:
                    return Install(dataclasses.replace(target, resolved=warm), (), tuple(notes),
                                   _findings(warm, isolation, npm_cache), time.monotonic() - started)
                since = (time.time(), npmlog.existing(npm_cache))
                remaining = max(1.0, started + bound - time.monotonic())
                found, ran = await resolve.run_resolution(target, isolation, pass_declared_values=pass_declared_values,
                                                          environ=environ, timeout=remaining)
                if found is not None and ran is not None and (short := _out_of_space(ran, npm_cache, since)):
                    # npm only warns when a file cannot be written (TAR_ENTRY_ERROR) and goes on: an
                    # executable left empty then runs as an empty shell script and exits 0 at once
                    failures.append(_failed(ran, npm_cache, since, requested_version, bound, short))
                    if npm_cache is not None:
                        npx_cache.discard_install(found.executable, isolation, npm_cache)
                    continue
                if found is not None:
                    if npm_cache is not None:
                        npx_cache.mark_complete(found.executable, isolation, npm_cache)
                        if ready is not None and ran is not None:
                            warm_install.remember(target, isolation, *ready, found, ran.cwd, npm_cache)
                    findings = _findings(found, isolation, npm_cache)
                    # an install that succeeded on its second run is an install: the first run's failure is no evidence
                    return Install(dataclasses.replace(target, resolved=found), (), tuple(notes), findings,
                                   time.monotonic() - started)
                if ran is None:
                    return Install(target, (), tuple(notes))  # not as expected: launched through the launcher
                failures.append(_failed(ran, npm_cache, since, requested_version, bound))
                if ran.timed_out:
                    break
    except TimeoutError:
        failures.append(_lock_timeout(bound, requested_version))
        return Install(target, tuple(failures), tuple(notes), (), time.monotonic() - started, locked=True)
    _discard(npm_cache, isolation)  # what a failed or killed install left is never trusted later
    return Install(target, tuple(failures), tuple(notes), (), time.monotonic() - started)


def _npm_cache(target: Target, isolation: str, environ: Mapping[str, str] | None) -> Path:
    env = server_env.child_env(target.env, environ)
    env.update(target.set_env)
    return npx_cache.npm_cache_dir(isolation, target.name, target.launch, env)


def _discard(npm_cache: Path | None, isolation: str) -> list[str]:
    return npx_cache.discard_incomplete(npm_cache, exclusive=isolation == "sandbox") if npm_cache else []


def _lock_path(target: Target, isolation: str) -> Path:
    """The lock file of ``target``'s installs, never inside what the sandbox shows."""
    if isolation == "sandbox":
        cache = sandbox.server_cache(target.name, target.launch)
        return cache.parent / f"{cache.name}.install.lock"
    digest = hashlib.sha256(target.launch.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return user_cache.folder("install-locks") / f"{digest}.lock"


@contextlib.asynccontextmanager
async def _exclusive(path: Path, deadline: float):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(str(path)) from None
                await asyncio.sleep(0.2)
        yield
    finally:
        os.close(fd)  # releases the lock


def _stderr(ran: resolve.Ran) -> str:
    return redact.cut_tail(ran.stderr.decode("utf-8", errors="replace"), 8192)


def _out_of_space(ran: resolve.Ran | None, npm_cache: Path | None, since: tuple[float, frozenset[str]]) -> str | None:
    """The line saying the install could not write a file for want of disk space, or ``None``."""
    text = _stderr(ran) if ran is not None else ""
    return machine_fault.no_space(text) or (machine_fault.no_space(npmlog.read_logs(npm_cache, *since)) if npm_cache else None)


def _findings(found: resolve.Resolved, isolation: str, npm_cache: Path | None) -> tuple[str, ...]:
    """The first package of the install, the server's own before its dependencies in name order, whose
    ``engines.node`` this Node is below, as one sentence. Read from what is installed, never from what npm or an
    install script printed, so a cold install and a warm one say the same."""
    if npm_cache is None or found.launcher != "npx":
        return ()
    install = npx_cache.install_dir(found.executable, isolation, npm_cache)
    current = node_engine.node_version()
    if install is None or not current:
        return ()
    try:
        locked = json.loads(npx_cache.plain_text(install / "package-lock.json", npx_cache.LOCKFILE_BYTES) or "")["packages"]
    except (ValueError, KeyError, TypeError, RecursionError):
        locked = None
    if not isinstance(locked, dict):  # an install without npm's lockfile: the server's own manifest alone
        locked = {f"node_modules/{found.package}": _manifest(install / "node_modules" / found.package)}
    own = f"node_modules/{found.package}"
    for where in sorted(locked, key=lambda where: (where != own, where)):
        meta = locked[where]
        declared = meta.get("engines", {}).get("node") if isinstance(meta, dict) \
            and isinstance(meta.get("engines"), dict) else None
        if not where.startswith("node_modules/") or not isinstance(declared, str) \
                or not node_engine.below(declared, current):
            continue
        name = where.rsplit("node_modules/", 1)[1]
        if not name:
            continue
        version = found.version if where == own else meta.get("version")
        text = f"{name}@{version if isinstance(version, str) else 'installed'} declares engines.node {declared!r}; " \
               f"this machine has v{'.'.join(map(str, current))}"
        return (text[:machine_fault.MAX_CHARS],)
    return ()


def _manifest(package: Path) -> dict | None:
    try:
        manifest = json.loads(npx_cache.plain_text(package / "package.json", npx_cache.MANIFEST_BYTES) or "")
    except (ValueError, RecursionError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _failed(ran: resolve.Ran, npm_cache: Path | None, since: tuple[float, frozenset[str]], requested_version: str,
            bound: float, short: str | None = None) -> Capture:
    tail = _stderr(ran)
    if ran.scripts:  # npm's own banners, from its stdout: which install scripts it had started
        tail = "".join(f"{banner}\n" for banner in ran.scripts) + tail
    logged = short or (npmlog.decisive(npmlog.read_logs(npm_cache, *since)) if npm_cache is not None else None)
    if logged and logged not in tail:
        tail = (tail.rstrip("\n") + "\n" if tail.strip() else "") + f"{npmlog.PREFIX}{logged}\n"
    if short is not None:
        failure = Failure("exited", PHASE, "the install could not write all its files", exit_code=ran.exit_code)
    elif ran.timed_out:
        failure = Failure("timeout", PHASE, f"the install did not finish within {bound:g} s")
    else:
        failure = Failure("exited", PHASE, "the install failed before any launch", exit_code=ran.exit_code)
    return Capture(requested_version, phase=PHASE, stderr_tail=tail, exit_code=ran.exit_code,
                   elapsed_seconds=round(ran.elapsed_seconds, 3), failure=failure)


def _lock_timeout(bound: float, requested_version: str) -> Capture:
    failure = Failure("timeout", PHASE, f"another install of this package held its cache for the whole {bound:g} s "
                      "bound")
    return Capture(requested_version, phase=PHASE, failure=failure)
