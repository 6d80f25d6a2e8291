"""Resolve an ``npx``/``uvx`` package once with its real launcher, stopped where it would start the server (a
dumper prints the argv and environment), then launch from that install. docs/METHODOLOGY.md, "Installing is
not measuring".
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.probe import server_env, process, sandbox
from harness.probe.process import SpawnError, split_command
from harness.probe.target import Target
from harness.probe.workdir import launch_dir
from harness.util import atomic, user_cache

# Set to 0 to launch through npx/uvx every time (the bench compares both).
SWITCH = "MCP_CONTEXT_COST_RESOLVE_ONCE"
SCRIPT_SHELL = "npm_config_script_shell"
FOREGROUND_SCRIPTS = "npm_config_foreground_scripts"
MAX_OUTPUT = 4 << 20  # bytes of a resolution's stdout kept (its end: an environment, some versions)
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")
_NAME = re.compile(r"^(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*$", re.IGNORECASE)
_PY_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(?:(==|@)([^\s;]+))?$")
_UVX_VALUE_OPTIONS = ("--with", "--from")

# Runs inside the launcher's environment (and isolation). argv[1] says which launcher; for npx its
# own argv is npm's ``-c <script>``. Prints one JSON object: argv, env (as received, in order),
# versions of the installed packages it can see. Any other script npm hands its script shell (a
# dependency's install or postinstall) is run by ``/bin/sh`` as npm would have run it.
_DUMPER = r'''
import json, os, sys
if sys.argv[1:2] == ["-c"] and os.environ.get("npm_lifecycle_event") != "npx":
    # npm runs every dependency's install script through the script shell too: run it for real, its
    # output on npm's stderr (foreground scripts), where the install's failure is read
    os.dup2(2, 1)
    os.execv("/bin/sh", ["sh", *sys.argv[1:]])
raw = open("/proc/self/environ", "rb").read().decode("utf-8", "surrogateescape")
env = [item.split("=", 1) for item in raw.split("\0") if "=" in item]
out = {"argv": sys.argv[1:], "env": env, "versions": {}, "bin": None}
def npm_versions():
    first = os.environ.get("PATH", "").split(os.pathsep)[0]
    if not first.endswith("/node_modules/.bin"):
        return
    root = os.path.dirname(os.path.dirname(first))
    deps = json.load(open(os.path.join(root, "package.json"))).get("dependencies") or {}
    for name in deps:
        meta = json.load(open(os.path.join(root, "node_modules", name, "package.json")))
        out["versions"][name] = meta.get("version")
    out["bin"] = first
def uv_versions(name, command):
    from importlib import metadata
    out["versions"][name] = metadata.version(name)
    out["bin"] = os.path.join(sys.prefix, "bin", command)
try:
    if sys.argv[0] == "-c":  # uvx ran ``python -c <this> <name> <command>``
        out["argv"] = []
        uv_versions(sys.argv[1], sys.argv[2])
        if not os.access(out["bin"], os.X_OK):
            raise FileNotFoundError(out["bin"])
    else:  # npm ran ``<this> -c <script>`` as its script shell
        npm_versions()
except Exception as exc:
    out["error"] = repr(exc)[:200]
sys.stdout.write("\n" + json.dumps(out))  # its own last line: npm prints a foreground script's banner before
'''


@dataclass(frozen=True)
class Resolved:
    """A package resolved once: launcher, package, version, and the argv and env it would start."""

    launcher: str
    package: str
    version: str
    argv: tuple[str, ...]
    isolation: str
    executable: str
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)

    def to_record(self) -> dict:
        """The record's ``resolvedPackage``: launcher, name, version (no path, no environment)."""
        return {"launcher": self.launcher, "name": self.package, "version": self.version}


@dataclass(frozen=True)
class Plan:
    """How to resolve a command: the resolution run's ``argv``, and for uvx the command's ``args``."""

    launcher: str
    package: str
    argv: list[str]
    args: tuple[str, ...] = ()


def enabled() -> bool:
    """Whether resolve-once is on (default) — ``MCP_CONTEXT_COST_RESOLVE_ONCE=0`` turns it off."""
    return os.environ.get(SWITCH, "1").strip() not in ("0", "false", "no", "off")


def plan(command: str | None) -> Plan | None:
    """The resolution run for a launch command, or ``None`` when it is not a form handled here."""
    try:
        argv = split_command(command or "")
    except SpawnError:
        return None
    if not argv:
        return None
    program = os.path.basename(argv[0])
    if program == "npx":
        return _npx_plan(argv)
    if program == "uvx":
        return _uvx_plan(argv)
    return None


def _npx_plan(argv: list[str]) -> Plan | None:
    if len(argv) < 3 or argv[1] not in ("-y", "--yes") or argv[2].startswith("-"):
        return None
    spec = argv[2]
    name = spec[:spec.index("@", 1)] if "@" in spec[1:] else spec
    if not _NAME.match(name) or "/" in spec.replace(name, "", 1):
        return None  # a path, a git URL, a tarball: left to npx
    return Plan("npx", name, list(argv))


def _uvx_plan(argv: list[str]) -> Plan | None:
    options: list[str] = []
    source = None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        option, eq, value = argv[i].partition("=")
        if option not in _UVX_VALUE_OPTIONS:
            return None  # an option whose effect this module does not reproduce
        if not eq:
            if i + 1 >= len(argv):
                return None
            value, i = argv[i + 1], i + 1
        if option == "--from":
            source = value
        else:
            options += [option, value]
        i += 1
    if i >= len(argv):
        return None
    command = argv[i]
    spec = source if source is not None else command
    match = _PY_NAME.match(spec)
    if not match:
        return None  # git+https://…, a path, a URL: left to uvx
    name = match.group(1)
    if source is None:
        command = name  # ``uvx pkg==1`` / ``uvx pkg@latest`` runs the command ``pkg``
    run = [argv[0], *options, "--from", spec, "python", "-c", _DUMPER, name, command]
    return Plan("uvx", name, run, tuple(argv[i + 1:]))


async def resolve(target: Target, isolation: str = "host", *, pass_declared_values: bool = True,
                  environ: Mapping[str, str] | None = None, timeout: float | None = None) -> Resolved | None:
    """Resolve ``target``'s package once in ``isolation``; ``None`` whenever anything is unexpected."""
    found, _ = await run_resolution(target, isolation, pass_declared_values=pass_declared_values, environ=environ,
                                    timeout=timeout)
    return found


@dataclass(frozen=True)
class Ran:
    """How one resolution run ended (``exit_code`` ``None``: killed at the bound)."""

    exit_code: int | None
    timed_out: bool
    stderr: bytes
    elapsed_seconds: float
    scripts: tuple[str, ...] = ()  # the banners npm printed on stdout for the install scripts it started
    cwd: str = ""  # the working directory it ran in


# npm's banner for a foreground install script it starts (``> pkg@1.0.0 postinstall``), on stdout
SCRIPT_BANNER = re.compile(rb"^> (\S+@\S+ (?:preinstall|install|postinstall|prepare))$", re.MULTILINE)
MAX_BANNERS = 8


async def run_resolution(target: Target, isolation: str = "host", *, pass_declared_values: bool = True,
                         environ: Mapping[str, str] | None = None,
                         timeout: float | None = None) -> tuple[Resolved | None, Ran | None]:
    """``(Resolved, Ran)``, ``(None, Ran)`` for a failed run, ``(None, None)`` when nothing usable ran."""
    try:
        ready = prepare(target, isolation, pass_declared_values=pass_declared_values, environ=environ)
        if ready is None:
            return None, None
        how, env, added = ready
        shown = dataclasses.replace(target, host_dirs=target.host_dirs + ((str(_dumper_dir()),)
                                                                          if isolation == "sandbox" else ()))
        # the widest budget a launch gets (a retry's): resolving may install, as a first launch would
        printed, ran = await _run(shown, how.argv, env, isolation, timeout or target.timeout_seconds * 2)
    except (SpawnError, OSError, ValueError):
        return None, None
    if ran.exit_code != 0:
        return None, ran
    found = _read(how, printed, isolation, added)
    return (found, ran) if found is not None else (None, None)


def prepare(target: Target, isolation: str, *, pass_declared_values: bool = True,
            environ: Mapping[str, str] | None = None) -> tuple[Plan, dict[str, str], tuple[str, ...]] | None:
    """``(plan, env, added)`` of ``target``'s resolution run — ``added``: the settings the run adds for itself — or
    ``None`` when it has none. Raises ``SpawnError``, ``OSError``, ``ValueError``."""
    how = plan(target.command) if target.command and isolation in ("host", "sandbox") else None
    if how is None or target.cwd is not None:
        return None
    from harness.probe import launch  # launch imports this module (launch_parts)

    sandboxed = isolation == "sandbox"
    env = server_env.child_env(target.env, environ, pass_declared_values=pass_declared_values and not sandboxed)
    env.update(target.set_env)
    if SCRIPT_SHELL in env:
        return None  # the host chose a script shell: a launch through npx would use it
    launch._refuse_names(target)  # a name that runs code never reaches a launcher, resolving or not
    added: tuple[str, ...] = ()
    if how.launcher == "npx":
        env[SCRIPT_SHELL] = str(_dumper_dir() / "dump")
        added = () if FOREGROUND_SCRIPTS in env else (FOREGROUND_SCRIPTS,)
        env.setdefault(FOREGROUND_SCRIPTS, "true")  # an install script's words reach the install's stderr
    return how, env, added


def _read(how: Plan, printed: bytes | None, isolation: str, added: tuple[str, ...] = ()) -> Resolved | None:
    """The launch the dumper saw, without the settings the resolution run ``added`` for itself."""
    try:
        # the dumper's line is the last: npm prints each foreground install script's banner on stdout first
        said = json.loads((printed or b"").rsplit(b"\n", 1)[-1])
        env = [(str(k), str(v)) for k, v in said["env"]]
        version = said["versions"].get(how.package)
        argv = [str(a) for a in said["argv"]]
        bin_dir = str(said["bin"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(version, str) or not _VERSION.match(version) or "error" in said:
        return None
    if how.launcher == "npx":
        env = [(k, v) for k, v in env if k != SCRIPT_SHELL and k not in added]
        if len(argv) != 2 or argv[0] != "-c":
            return None
        # npm spawns its script shell by the name ``sh``, found on the PATH it hands over: so does a launch
        return Resolved("npx", how.package, version, ("sh", *argv), isolation, bin_dir, tuple(env))
    return Resolved("uvx", how.package, version, (bin_dir, *how.args), isolation, bin_dir, tuple(env))


def launch_parts(target: Target, isolation: str) -> tuple[list[str], dict[str, str]] | None:
    """``(argv, env)`` to launch ``target`` from its install, or ``None``."""
    resolved = target.resolved
    if resolved is None or resolved.isolation != isolation or not _still_there(resolved, target):
        return None
    return list(resolved.argv), dict(resolved.env)


def _still_there(resolved: Resolved, target: Target) -> bool:
    path = resolved.executable
    if resolved.isolation == "sandbox":
        cache = sandbox.server_cache(target.name, target.launch)
        for inside, host in ((f"{sandbox.SANDBOX_HOME}/.npm/", cache / "npm"),
                             (f"{sandbox.SANDBOX_HOME}/.cache/uv/", cache / "uv")):
            if path.startswith(inside):
                path = str(host / path.removeprefix(inside))
                break
        else:
            return False
    return os.path.isdir(path) if resolved.launcher == "npx" else os.path.isfile(path)


async def resolved_target(target: Target, isolation: str, **kwargs) -> Target:
    """``target`` with ``resolved`` set when ``enabled`` and resolution succeeds, else ``target``."""
    if not enabled() or target.resolved is not None:
        return target
    found = await resolve(target, isolation, **kwargs)
    return target if found is None else dataclasses.replace(target, resolved=found)


DRAIN_SECONDS = 2.0  # how long an ended run's pipes are read while something it left running holds them
STDERR_KEPT = 1 << 16  # bytes of a resolution's stderr kept as its tail (npm's errors come last)


async def _run(target: Target, argv: list[str], env: dict, isolation: str, timeout: float) -> tuple[bytes, Ran]:
    """Run one resolution like a launch: its bounded stdout and how it ended."""
    from harness.probe import launch  # launch imports this module (launch_parts)

    started = time.monotonic()
    with launch_dir(target.name, target.needs_git) as cwd:
        run_argv, run_env, fds = launch.isolated_argv(argv, env, cwd, isolation, target)
        try:
            proc = await process.spawn(run_argv, run_env, cwd, stream_limit=1 << 16, pass_fds=fds)
        finally:
            for fd in fds:
                os.close(fd)
        tail, out = bytearray(), bytearray()
        code, timed_out = None, False
        reading = asyncio.ensure_future(asyncio.gather(_bounded(proc.stdout, out), _tail(proc.stderr, tail)))
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            loop = asyncio.get_running_loop()
            ends = loop.time() + timeout
            while not reading.done() and proc.returncode is None and loop.time() < ends:
                await asyncio.sleep(0.05)
            if not reading.done() and proc.returncode is not None:
                # it ended while something it left running holds its pipes: a moment to drain, not the bound
                await asyncio.wait({reading}, timeout=max(0.0, min(DRAIN_SECONDS, ends - loop.time())))
            if reading.done():
                reading.result()
                code = await asyncio.wait_for(proc.wait(), 5.0)
            elif proc.returncode is not None:
                code = proc.returncode
            else:
                timed_out = True
        except asyncio.TimeoutError:
            timed_out = True
        finally:
            if not reading.done():
                reading.cancel()
                with contextlib.suppress(asyncio.CancelledError, ValueError):
                    await reading
            ended = await process.terminate(proc, grace=0.5)
            transport = getattr(proc, "_transport", None)  # the pipes of a run cut short, closed now
            if transport is not None:
                transport.close()
    if code is None and not timed_out:
        code = ended
    banners = tuple(m.group(0).decode("utf-8", errors="replace") for m in SCRIPT_BANNER.finditer(out))[:MAX_BANNERS]
    return bytes(out), Ran(None if timed_out else code, timed_out, bytes(tail), time.monotonic() - started, banners,
                           str(cwd))


async def _tail(stream, keep: bytearray) -> None:
    while chunk := await stream.read(1 << 16):
        keep += chunk
        del keep[:-STDERR_KEPT]


async def _bounded(stream, keep: bytearray) -> None:
    """Read ``stream`` to its end, keeping its last ``MAX_OUTPUT`` bytes: the dumper's line comes last, after
    whatever the install scripts printed (a native build's log can be long)."""
    while chunk := await stream.read(1 << 16):
        keep += chunk
        del keep[:-MAX_OUTPUT]


def _dumper_script() -> str:
    """The dumper as the executable file it is kept as: its interpreter line, then ``_DUMPER``."""
    return f"#!{sys.executable}\n{_DUMPER}"


def dumper_digest() -> str:
    """What identifies the dumper script (its text and interpreter)."""
    return hashlib.sha256(_dumper_script().encode()).hexdigest()[:16]


def _dumper_dir() -> Path:
    text = _dumper_script()
    folder = user_cache.folder("resolver") / dumper_digest()
    script = folder / "dump"
    if not script.is_file() or script.read_text(encoding="utf-8") != text:
        atomic.write_bytes(script, text.encode("utf-8"), mode=0o555)
    return folder
