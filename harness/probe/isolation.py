"""The record's ``isolation`` object and the choice of mode. docs/METHODOLOGY.md, "Which machine a number applies
to".
"""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import shutil
import subprocess
import threading

from harness.core.record import ISOLATION_MODES
from harness.probe import server_env

RUNTIMES = {"node": ["node", "--version"], "npm": ["npm", "--version"],
            "python": ["python3", "--version"], "uv": ["uv", "--version"]}


_versions_lock = threading.Lock()


def runtime_versions() -> dict[str, str | None]:
    """Versions of each runtime on the child PATH, probed once per process."""
    with _versions_lock:
        return dict(_probe_versions())


@functools.lru_cache(maxsize=None)
def _probe_versions() -> dict[str, str | None]:
    env = server_env.child_env()
    versions: dict[str, str | None] = {}
    for name, argv in RUNTIMES.items():
        found = shutil.which(argv[0], path=env["PATH"])
        if found and name == "npm" and (packaged := npm_package_version(found)):
            versions[name] = packaged
            continue
        versions[name] = _version(found, argv[1:], env) if found else None
    return versions


_SEMVER = re.compile(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?")
_MAX_PACKAGE_JSON = 1 << 20


def npm_package_version(npm: str) -> str | None:
    """The ``version`` of the npm package ``npm`` runs from (``<package>/bin/npm-cli.js``), what
    ``npm --version`` prints, without starting node; ``None`` for another layout or an odd file."""
    try:
        real = os.path.realpath(npm)
        if os.path.basename(os.path.dirname(real)) != "bin":
            return None
        with open(os.path.join(os.path.dirname(os.path.dirname(real)), "package.json"), "rb") as fh:
            data = fh.read(_MAX_PACKAGE_JSON + 1)
        doc = json.loads(data) if len(data) <= _MAX_PACKAGE_JSON else None
    except (OSError, ValueError):
        return None
    version = doc.get("version") if isinstance(doc, dict) and doc.get("name") == "npm" else None
    return version if isinstance(version, str) and _SEMVER.fullmatch(version) else None


def _version(program: str, args: list[str], env: dict) -> str | None:
    try:
        done = subprocess.run([program, *args], capture_output=True, text=True, timeout=20, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[0].removeprefix("Python ").removeprefix("uv ").split(" ")[0] if text else None


MODES = ISOLATION_MODES
NOTES = {
    "host": "run as the harness's user through a clean intermediate process holding only the server's minimal "
            "environment; it can read and write whatever that user can — files, and the environment of any other "
            "process of that user, such as the shell or CI step that started the harness — but not the harness's "
            "own environment or memory (not dumpable), unless that user is root or has sudo",
    "sandbox": "bubblewrap: new namespaces, no capabilities, fresh HOME and /tmp, host homes, checkout and secret "
               "files hidden, system dirs read-only, only the host paths in shownHostPaths shown (read-only, secret "
               "paths masked), declared env names given dummy values, a package cache of the server's own, network "
               "shared for package fetch",
    "docker": "one container per server from a pinned image, resource limits, no host mounts or credentials",
}
# What ``--help`` of the commands that launch servers says about ``--isolation`` (docs/SECURITY.md).
HOST_HELP = ("host runs the server as you, through a clean intermediate process: it can read and write whatever "
             "you can — your files, and the environment of your shell, CI step or any other process of yours — "
             "but not this harness's own environment or memory (unless you are root or have sudo)")
SANDBOX_HELP = ("sandbox (bubblewrap) shows the server system folders, a fresh home and /tmp, its own package cache "
                "and only the host files a --command names (each file alone, never its folder; a named folder "
                "with its secret files masked; never a home folder); declared env names get placeholder values")


class Unavailable(ValueError):
    """The isolation asked for cannot be had on this machine (bad input: exit 2)."""


def resolve_mode(requested: str) -> str:
    """``auto`` → ``sandbox`` or ``host``; :class:`Unavailable` for a mode this machine cannot run."""
    if requested == "auto":
        return "sandbox" if _bwrap_works() else "host"
    if requested not in MODES:
        raise ValueError(f"unknown isolation mode {requested!r}: choose auto, {', '.join(MODES)}")
    if requested == "sandbox" and not _bwrap_works():
        raise Unavailable("--isolation sandbox: bubblewrap cannot create a sandbox here (bwrap is not installed, or "
                          "this machine does not allow user namespaces); use --isolation host, or auto")
    if requested == "docker":
        problem = _docker_problem()
        if problem:
            raise Unavailable(f"--isolation docker: {problem}; start Docker, or use --isolation host or sandbox")
    return requested


def _docker_problem() -> str | None:
    found = shutil.which("docker")
    if not found:
        return "the docker command is not installed"
    try:
        # the environment a docker launch gets: no process the harness starts carries its own
        done = subprocess.run([found, "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True,
                              timeout=30, env=server_env.child_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the Docker daemon did not answer ({type(exc).__name__})"
    if done.returncode == 0:
        return None
    said = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    return "the Docker daemon is not reachable" + (f" ({said[-1][:200]})" if said else "")


@functools.lru_cache(maxsize=None)
def _bwrap_works() -> bool:
    found = shutil.which("bwrap")
    if not found:
        return False
    try:
        done = subprocess.run([found, "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True, timeout=20,
                              env={})  # as a sandboxed launch runs bwrap: with nothing of the harness's environment
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def describe(mode: str = "host", image: str | None = None, network: str | None = None, note: str | None = None) -> dict:
    """The record's ``isolation`` object: mode, os, arch, image, network, runtimes, note."""
    network = network or ("bridge" if mode == "docker" else "host")
    return {
        "mode": mode,
        "os": platform.system().lower(),
        "arch": platform.machine(),
        "image": image,
        "network": network,
        "runtimes": runtime_versions(),
        "note": note or NOTES.get(mode),
    }
