"""Install an ``npx``/``uvx`` package once, under its own bound, before any launch is timed: ``install`` returns
an ``Install``. One install per cache at a time (``flock``); what a broken run left is discarded first
(``heal``); a failed install is tried once more, then is the measurement. docs/METHODOLOGY.md, "Installing is
not measuring".
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import hashlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.probe import heal, npmlog, redact, resolve, sandbox
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target

INSTALL_VARIABLE = "MCP_CONTEXT_COST_INSTALL_TIMEOUT"
DEFAULT_SECONDS = 300.0
PHASE = "install"


@dataclass(frozen=True)
class Install:
    """What installing gave: ``target`` (``resolved`` set when it installed), ``failures`` (one ``Capture`` per
    failed run), ``notes`` (what was discarded) and ``findings`` (an unmet engine requirement, for a later
    failure's evidence)."""

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
            for _ in range(2):
                notes += _discard(npm_cache, isolation)
                since = (time.time(), npmlog.existing(npm_cache))
                remaining = max(1.0, started + bound - time.monotonic())
                found, ran = await resolve.run_resolution(target, isolation, pass_declared_values=pass_declared_values,
                                                          environ=environ, timeout=remaining)
                if found is not None:
                    if npm_cache is not None:
                        heal.mark_complete(found.executable, isolation, npm_cache)
                    findings = _findings(ran, npm_cache, since) or _declared_engine(found, isolation, npm_cache)
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
    from harness.probe import environment

    env = environment.child_env(target.env, environ)
    env.update(target.set_env)
    return heal.npm_cache_dir(isolation, target.name, target.launch, env)


def _discard(npm_cache: Path | None, isolation: str) -> list[str]:
    return heal.discard_incomplete(npm_cache, exclusive=isolation == "sandbox") if npm_cache else []


def _lock_path(target: Target, isolation: str) -> Path:
    """The lock file of ``target``'s installs: beside its sandbox cache (never inside it), or one per launch
    command on the host."""
    if isolation == "sandbox":
        cache = sandbox.server_cache(target.name, target.launch)
        return cache.parent / f"{cache.name}.install.lock"
    digest = hashlib.sha256(target.launch.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return sandbox.cache_root().parent / "install-locks" / f"{digest}.lock"


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


def _findings(ran: resolve.Ran | None, npm_cache: Path | None, since: tuple[float, frozenset[str]]) -> tuple[str, ...]:
    text = _stderr(ran) if ran is not None else ""
    line = npmlog.engine(text) or (npmlog.engine(npmlog.read_logs(npm_cache, *since)) if npm_cache else None)
    return (line,) if line else ()


def _declared_engine(found: resolve.Resolved, isolation: str, npm_cache: Path | None) -> tuple[str, ...]:
    """The installed package's own ``engines.node`` when this machine's Node is below it; reads only a plain file
    inside ``npm_cache``."""
    import json

    from harness.probe import machine

    if npm_cache is None or found.launcher != "npx":
        return ()
    bin_dir = found.executable
    if isolation == "sandbox":
        inside = f"{sandbox.SANDBOX_HOME}/.npm/"
        if not bin_dir.startswith(inside):
            return ()
        bin_dir = str(npm_cache / bin_dir.removeprefix(inside))
    manifest = Path(bin_dir).parent / found.package / "package.json"
    real = os.path.realpath(manifest)
    if not real.startswith(os.path.realpath(npm_cache) + os.sep) or not os.path.isfile(real):
        return ()
    try:
        with open(real, "rb") as handle:
            declared = json.loads(handle.read(1 << 20)).get("engines", {}).get("node")
    except (OSError, ValueError, AttributeError):
        return ()
    current = machine.node_version()
    if not isinstance(declared, str) or not current or not machine.below(declared, current):
        return ()
    text = f"{found.package}@{found.version} declares engines.node {declared!r}; this machine has " \
           f"v{'.'.join(map(str, current))}"
    return (text[:machine.MAX_CHARS],)


def _failed(ran: resolve.Ran, npm_cache: Path | None, since: tuple[float, frozenset[str]], requested_version: str,
            bound: float) -> Capture:
    tail = _stderr(ran)
    logged = npmlog.decisive(npmlog.read_logs(npm_cache, *since)) if npm_cache is not None else None
    if logged and logged not in tail:
        tail = (tail.rstrip("\n") + "\n" if tail.strip() else "") + f"{npmlog.PREFIX}{logged}\n"
    if ran.timed_out:
        failure = Failure("timeout", PHASE, f"the install did not finish within {bound:g} s")
    else:
        failure = Failure("exited", PHASE, "the install failed before any launch", exit_code=ran.exit_code)
    return Capture(requested_version, phase=PHASE, stderr_tail=tail, exit_code=ran.exit_code,
                   elapsed_seconds=round(ran.elapsed_seconds, 3), failure=failure)


def _lock_timeout(bound: float, requested_version: str) -> Capture:
    failure = Failure("timeout", PHASE, f"another install of this package held its cache for the whole {bound:g} s "
                      "bound")
    return Capture(requested_version, phase=PHASE, failure=failure)
