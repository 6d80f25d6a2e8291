"""Installing is not measuring: an ``npx``/``uvx`` package is installed once, under a bound of its
own, before any launch of a measurement is timed.

The install is the resolution run of ``harness.probe.resolve`` — the real launcher, in the launch's
isolation and cache, stopped where it would start the server — and every path that measures goes
through it (``harness.probe.measure.measure``; the sweep does it in a launch slot of its own).
Around it:

* one install per cache at a time: an exclusive ``flock`` per server cache (sandbox) or per launch
  command (host), taken within the install's bound. The kernel drops it with its holder, so a
  lock file a killed run left behind holds nothing;
* nothing a broken run left is trusted: before installing, npx installs that never completed, a
  dependency missing from one, and npm locks nobody holds are discarded
  (``heal.discard_incomplete``; under the sandbox the cache is the harness's alone and its lock is
  held, so every npm lock in it is stale and an install it never saw complete is discarded too),
  and an install the harness saw complete is marked so;
* the bound (``INSTALL_VARIABLE``, default ``DEFAULT_SECONDS``) ends the whole install's process
  group; what it left is discarded at once;
* a failed install is tried once more (after the same discarding) unless it hit the bound; when it
  fails again, its own words — the package manager's stderr, and npm's debug log where stderr says
  nothing (``harness.probe.npmlog``) — are the evidence, as a ``Capture`` of phase ``install``.
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
    """What installing ``target``'s package gave: ``target`` (with ``resolved`` set when it
    installed), ``failures`` (one ``Capture`` per failed install run, phase ``install``; empty when
    it installed or nothing was installed here), ``notes`` (what was discarded from the cache) and
    ``findings`` (decisive lines of a successful install's own output — an engine requirement this
    machine does not meet — for the evidence of a launch that fails afterwards)."""

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
    """Install ``target``'s package once (see module doc). Returns ``Install(target)`` unchanged when
    there is nothing to install here: resolve-once is off, the target is resolved already, or its
    command is not an ``npx``/``uvx`` registry form ``harness.probe.resolve`` handles."""
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
    """The lock file of ``target``'s installs: beside its sandbox cache (never inside what the
    sandbox shows the server), or one per launch command for the host's shared caches."""
    if isolation == "sandbox":
        cache = sandbox.server_cache(target.name, target.launch)
        return cache.parent / f"{cache.name}.install.lock"
    digest = hashlib.sha256(target.launch.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return sandbox.cache_root().parent / "install-locks" / f"{digest}.lock"


@contextlib.asynccontextmanager
async def _exclusive(path: Path, deadline: float):
    """Hold an exclusive ``flock`` on ``path`` (created if needed); ``TimeoutError`` at ``deadline``
    (``time.monotonic``). The lock dies with its holder: a leftover file is no lock."""
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
    """Decisive lines a successful install printed or logged (an unmet engine requirement).
    ``since``: when the run started and the logs that were there before it."""
    text = _stderr(ran) if ran is not None else ""
    line = npmlog.engine(text) or (npmlog.engine(npmlog.read_logs(npm_cache, *since)) if npm_cache else None)
    return (line,) if line else ()


def _declared_engine(found: resolve.Resolved, isolation: str, npm_cache: Path | None) -> tuple[str, ...]:
    """The installed package's own ``engines.node`` when this machine's Node is below it — read from
    the install, so a warm cache (where npm warns about nothing) says it too. Only a plain file
    inside ``npm_cache`` is read (the server wrote that cache: no link is followed out of it)."""
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
    """The ``Capture`` of a failed install run: its stderr tail, and npm's own log's decisive line
    where the tail has none."""
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
