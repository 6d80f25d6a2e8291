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
import re
import shlex
import shutil
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.probe import machine_fault, npmlog, reaper, redact, resolve, sandbox, server_env, workdir
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target

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
                ready = _ready(target, isolation, pass_declared_values, environ) if npm_cache is not None else None
                if attempt == 0 and ready is not None and npm_cache is not None \
                        and (warm := installed(target, isolation, *ready, npm_cache)) is not None:
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
                        discard_install(found.executable, isolation, npm_cache)
                    continue
                if found is not None:
                    if npm_cache is not None:
                        mark_complete(found.executable, isolation, npm_cache)
                        if ready is not None and ran is not None:
                            remember(target, isolation, *ready, found, ran.cwd, npm_cache)
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
    return npm_cache_dir(isolation, target.name, target.launch, env)


def _discard(npm_cache: Path | None, isolation: str) -> list[str]:
    return discard_incomplete(npm_cache, exclusive=isolation == "sandbox") if npm_cache else []


def _lock_path(target: Target, isolation: str) -> Path:
    """The lock file of ``target``'s installs, never inside what the sandbox shows."""
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


def _out_of_space(ran: resolve.Ran | None, npm_cache: Path | None, since: tuple[float, frozenset[str]]) -> str | None:
    """The line saying the install could not write a file for want of disk space, or ``None``."""
    text = _stderr(ran) if ran is not None else ""
    return machine_fault.no_space(text) or (machine_fault.no_space(npmlog.read_logs(npm_cache, *since)) if npm_cache else None)


def _findings(found: resolve.Resolved, isolation: str, npm_cache: Path | None) -> tuple[str, ...]:
    """The first package of the install, the server's own before its dependencies in the lockfile's order, whose
    ``engines.node`` this Node is below, as one sentence. Read from what is installed, never from what npm or an
    install script printed, so a cold install and a warm one say the same."""
    if npm_cache is None or found.launcher != "npx":
        return ()
    install = _install_dir(found.executable, isolation, npm_cache)
    current = machine_fault.node_version()
    if install is None or not current:
        return ()
    try:
        locked = json.loads(_plain_text(install / "package-lock.json", LOCKFILE_BYTES) or "")["packages"]
    except (ValueError, KeyError, TypeError):
        locked = None
    if not isinstance(locked, dict):  # an install without npm's lockfile: the server's own manifest alone
        locked = {f"node_modules/{found.package}": _manifest(install / "node_modules" / found.package)}
    own = f"node_modules/{found.package}"
    for where in sorted(locked, key=lambda where: (where != own, where)):
        meta = locked[where]
        declared = meta.get("engines", {}).get("node") if isinstance(meta, dict) \
            and isinstance(meta.get("engines"), dict) else None
        if not where.startswith("node_modules/") or not isinstance(declared, str) \
                or not machine_fault.below(declared, current):
            continue
        name = where.rsplit("node_modules/", 1)[1]
        version = found.version if where == own else meta.get("version")
        text = f"{name}@{version if isinstance(version, str) else 'installed'} declares engines.node {declared!r}; " \
               f"this machine has v{'.'.join(map(str, current))}"
        return (text[:machine_fault.MAX_CHARS],)
    return ()


def _manifest(package: Path) -> dict | None:
    try:
        manifest = json.loads(_plain_text(package / "package.json", MANIFEST_BYTES) or "")
    except ValueError:
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
        why = _untrusted(directory, exclusive)
        if why:
            found.append((directory, why))
        elif age is not None:
            found.append((directory / NPM_LOCK, "stale lock"))
    return found


def _untrusted(directory: Path, marker_needed: bool) -> str | None:

    manifest = directory / "package.json"
    if not os.path.lexists(manifest):
        return "an install that never completed (node_modules without package.json)" \
            if (directory / "node_modules").exists() else None
    text = _plain_text(manifest, MANIFEST_BYTES)
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
    text = _plain_text(path, MARKER_BYTES, cut=True)
    return "" if text is None else text


def _plain_text(path: Path, limit: int, cut: bool = False) -> str | None:
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


def _install_dir(bin_dir: str, isolation: str, npm_cache: Path) -> Path | None:
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
    install = _install_dir(bin_dir, isolation, npm_cache)
    if install is not None:
        shutil.rmtree(install, ignore_errors=True)


def mark_complete(bin_dir: str, isolation: str, npm_cache: Path) -> None:
    """Write ``MARKER`` into the plain ``_npx/<hash>`` install whose ``node_modules/.bin`` is ``bin_dir``."""
    install = _install_dir(bin_dir, isolation, npm_cache)
    if install is None:
        return
    # written beside and renamed over: whatever the package left at the marker's name (a link out of the
    # cache, a fifo) is replaced, never written through or waited on
    temporary = install / f"{MARKER}.{os.getpid()}.tmp"
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, MARKER_TEXT.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(temporary, install / MARKER)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


# --- a warm install taken from the cache -----------------------------------------------------------
# After an install run for an exact ``npx -y <package>@<version>`` on the host, what the resolver saw (argv,
# environment, bin folder) is kept beside the cache with the inputs it came from. A later install with the
# same inputs starts from it without running npx again, only when the cache still proves the same package
# installed complete: the procedure's marker, the install in the one folder npx uses for the spec and naming
# exactly that spec, the package's own package.json with that name and version, every package its lockfile
# names present, its bin inside it, no link out of the install, no npm lock, and npm, node and every npm config
# file and project or global folder npx consults unchanged; and the kept entry saying nothing npx would not (the
# bin and the plan's arguments as npm quotes them, the host's variables, npm's own). Nothing that may hold a
# secret is kept: no declared value, no URL with a user or password, no variable named like a credential.

INSTALLED_DIR = "installed"  # under the harness's cache folder
INSTALLED_BYTES = 1 << 20
INSTALLED_FORMAT = 1
LOCKFILE_BYTES = 16 << 20
_EXACT = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
_USERINFO = re.compile(r"://[^/\s]*@")  # a URL carrying a user or password: never written to disk


def _ready(target: Target, isolation: str, pass_declared_values: bool,
           environ: Mapping[str, str] | None) -> tuple[resolve.Plan, dict[str, str]] | None:
    """``(plan, env)`` of an install that may be taken from the cache, else ``None``."""
    if isolation != "host" or target.env or target.set_env or target.needs_git:
        return None  # declared values are never written to disk; a repository changes where npm looks
    try:
        ready = resolve.prepare(target, isolation, pass_declared_values=pass_declared_values, environ=environ)
    except (OSError, ValueError, resolve.SpawnError):
        return None
    if ready is None or ready[0].launcher != "npx":
        return None
    how, env, _ = ready
    spec = how.argv[2]
    if not spec.startswith(how.package + "@") or not _EXACT.match(spec[len(how.package) + 1:]):
        return None  # a tag or a range can move: npx asks the registry
    if any(_USERINFO.search(value) or server_env.DENY_PATTERN.search(name) for name, value in env.items()):
        return None
    return how, env


def _installed_path(isolation: str, how: resolve.Plan, cwd: str) -> Path:
    slot = json.dumps([isolation, how.argv, cwd]).encode("utf-8", "surrogatepass")
    return sandbox.cache_root().parent / INSTALLED_DIR / f"{hashlib.sha256(slot).hexdigest()[:32]}.json"


def _installed_key(isolation: str, how: resolve.Plan, env: dict[str, str], cwd: str) -> str:
    text = json.dumps([INSTALLED_FORMAT, PROCEDURE, resolve.dumper_digest(), isolation, how.argv, cwd,
                       list(env.items())])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _fingerprint(path: str) -> list:
    """``[path, size, mtime_ns, inode, mode]`` of what ``path`` names (links followed), ``[path]`` when absent."""
    try:
        st = os.stat(path)
    except OSError:
        return [path]
    return [path, st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode]


def _consulted(env: Mapping[str, str], said: Mapping[str, str], cwd: str) -> list | None:
    """Fingerprints of what npx reads besides the install: npx, node (and the first on each PATH), npm and its
    builtin config, the global and user config, the global folders, and a project above the working directory.
    ``None`` when the resolver's environment does not name them."""
    try:
        npx = shutil.which("npx", path=env["PATH"])
        npm_root = os.path.dirname(os.path.dirname(said["npm_execpath"]))
        prefix = said["npm_config_global_prefix"]
        nodes = [shutil.which("node", path=env["PATH"]), shutil.which("node", path=said["PATH"])]
        paths = [os.path.realpath(npx or "npx"), said["NODE"], os.path.join(npm_root, "package.json"),
                 os.path.join(npm_root, "npmrc"), said["npm_config_globalconfig"], said["npm_config_userconfig"],
                 os.path.join(prefix, "lib", "node_modules"), os.path.join(prefix, "bin")]
    except (KeyError, TypeError):
        return None
    if npx is None:
        return None
    paths += [node or "node" for node in nodes]  # the node npx runs on, and the server's ``#!/usr/bin/env node``
    for folder in Path(cwd).parents:  # npm's project is the nearest folder above with either
        paths += [str(folder / "package.json"), str(folder / "node_modules")]
    return [_fingerprint(path) for path in paths]


def remember(target: Target, isolation: str, how: resolve.Plan, env: dict[str, str], found: resolve.Resolved,
             cwd: str, npm_cache: Path) -> None:
    """Keep what an install run in ``cwd`` resolved, for ``installed``; nothing when it could hold a secret."""
    said = dict(found.env)
    if cwd != str(workdir.own_path(target.name)) or len(said) != len(found.env) \
            or any(_USERINFO.search(v) or server_env.DENY_PATTERN.search(k) for k, v in found.env):
        return
    consulted = _consulted(env, said, cwd)
    if consulted is None or installed_from(found, how, cwd, npm_cache) is None:
        return
    entry = {"key": _installed_key(isolation, how, env, cwd), "consulted": consulted,
             "argv": list(found.argv), "env": [list(pair) for pair in found.env], "bin": found.executable,
             "version": found.version}
    path = _installed_path(isolation, how, cwd)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, json.dumps(entry).encode("utf-8", "surrogatepass"))
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def installed(target: Target, isolation: str, how: resolve.Plan, env: dict[str, str],
              npm_cache: Path) -> resolve.Resolved | None:
    """The install an earlier run resolved with these same inputs, when the cache still proves it; else ``None``."""
    cwd = str(workdir.own_path(target.name))
    text = _plain_text(_installed_path(isolation, how, cwd), INSTALLED_BYTES)
    try:
        entry = json.loads(text) if text is not None else None
        if not isinstance(entry, dict) or entry.get("key") != _installed_key(isolation, how, env, cwd):
            return None
        pairs = [(k, v) for k, v in entry["env"] if isinstance(k, str) and isinstance(v, str)]
        argv = entry["argv"]
        found = resolve.Resolved("npx", how.package, entry["version"], tuple(argv), isolation, entry["bin"],
                                 tuple(pairs))
        if len(pairs) != len(entry["env"]) or not all(isinstance(a, str) for a in argv) \
                or not isinstance(found.executable, str) or entry["consulted"] != _consulted(env, dict(pairs), cwd) \
                or not _as_npx_hands_over(found, how, env, cwd):
            return None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return installed_from(found, how, cwd, npm_cache)


# npm's variables for a bin besides its npm_*, and the launch's marker (a launch sets its own over it)
_NPM_ADDS = frozenset({"NODE", "INIT_CWD", "COLOR", "EDITOR", reaper.MARKER})


def _as_npx_hands_over(found: resolve.Resolved, how: resolve.Plan, env: Mapping[str, str], cwd: str) -> bool:
    """Whether a kept entry says only what npx says for ``how`` run with ``env`` in ``cwd``: the bin and the plan's
    arguments quoted as npm quotes them; the npm and node on the host's PATH, and npm's folders ahead of that PATH;
    the host's variables; else only npm's."""
    words = shlex.split(found.argv[2])
    bin_name = "'" + words[0].replace("'", "'\\''") + "'" if words else ""
    if found.argv[2] != " ".join([bin_name, *map(_npm_quoted, how.argv[3:])]):
        return False
    said = dict(found.env)
    npx, node = shutil.which("npx", path=env["PATH"]), shutil.which("node", path=env["PATH"])
    if npx is None or node is None:
        return False
    npm_root = os.path.dirname(os.path.dirname(os.path.realpath(npx)))
    projects = (cwd, *map(str, Path(cwd).parents))  # npm puts every folder's node_modules/.bin up to the root
    folders = [found.executable, *(os.path.join(p, "node_modules", ".bin") for p in projects),
               os.path.join(npm_root, "node_modules", "@npmcli", "run-script", "lib", "node-gyp-bin"), env["PATH"]]
    if said.get("npm_execpath") != os.path.join(npm_root, "bin", "npm-cli.js") \
            or said.get("NODE") != os.path.realpath(node) or said.get("PATH") != os.pathsep.join(folders):
        return False
    return all(value == env[name] if name in env else name.startswith("npm_") or name in _NPM_ADDS
               for name, value in found.env if name != "PATH")


def _npm_quoted(word: str) -> str:
    """``word`` as npm quotes an argument for ``sh -c`` (@npmcli/promise-spawn's ``escape.sh``)."""
    if not word:
        return "''"
    if not re.search(r"[\t\n\r \"#$&'()*;<>?\\`|~]", word):
        return word
    quoted = re.sub(r"^(?:'')+(?!$)", "", "'" + word.replace("'", "'\\''") + "'")
    return quoted.replace("\\'''", "\\'")


def installed_from(found: resolve.Resolved, how: resolve.Plan, cwd: str, npm_cache: Path) -> resolve.Resolved | None:
    """``found`` when the npx install it names is this procedure's, complete, of exactly the pinned package, and
    starts its bin from inside it; else ``None``."""
    spec = how.argv[2]
    version = spec[len(how.package) + 1:]
    said = dict(found.env)
    if found.version != version or found.package != how.package or len(found.argv) != 3 \
            or found.argv[:2] != ("sh", "-c") or said.get("INIT_CWD") != cwd \
            or said.get("PATH", "").split(os.pathsep)[0] != found.executable:
        return None
    install = _install_dir(found.executable, "host", npm_cache)
    if install is None or install.name != _npx_folder(spec) or _untrusted(install, True) is not None \
            or os.path.lexists(install / NPM_LOCK):
        return None
    package = install / "node_modules" / how.package
    try:
        manifest = json.loads(_plain_text(install / "package.json", MANIFEST_BYTES) or "")
        own = json.loads(_plain_text(package / "package.json", MANIFEST_BYTES) or "")
        locked = json.loads(_plain_text(install / "package-lock.json", LOCKFILE_BYTES) or "")["packages"]
        words = shlex.split(found.argv[2])
        if manifest["_npx"]["packages"] != [spec] or own["name"] != how.package or own["version"] != version:
            return None
        if any(where and not (where.startswith("node_modules/") and ".." not in where.split("/")
                              and os.path.isfile(install / where / "package.json"))
               for where, meta in locked.items() if not (isinstance(meta, dict) and meta.get("optional"))):
            return None  # a package the install's lockfile names is missing
        if any(os.path.lexists(path) and os.path.realpath(path) != os.path.normpath(path)
               for path in (install / where for where in locked)):
            return None  # a package of the install is a link (out of it, or to another of its packages)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not words or "/" in words[0] or words[0] in (".", ".."):
        return None
    real_package = os.path.realpath(package)
    program = os.path.realpath(Path(found.executable) / words[0])
    if real_package != os.path.normpath(package) or not program.startswith(real_package + os.sep) \
            or not os.path.isfile(program):
        return None  # a link out of the install, or a bin that is not the package's
    return found


def _npx_folder(spec: str) -> str:
    """The one ``_npx/<name>`` folder npx installs ``npx -y <spec>`` in (libnpmexec: its sha512, 16 digits)."""
    return hashlib.sha512(spec.encode("utf-8", "surrogatepass")).hexdigest()[:16]
