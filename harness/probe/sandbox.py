"""Isolation modes a server can be launched under (issue #6, "Isolation modes").

``host``    the server runs as a child of the harness with the minimal environment of
            ``environment.child_env`` — nothing else isolated.
``sandbox`` bubblewrap (``bwrap``): new user/pid/ipc/uts namespaces, a fresh HOME and /tmp, the
            host's home directories and this checkout invisible, system directories read-only,
            declared env names given dummy values, the network kept for package fetch, and a
            package cache owned by the harness (so installs stay warm without exposing the
            user's own ~/.npm or ~/.cache).
``docker``  one container per server (argv built by ``docker_argv``); runs for real on GitHub.

Every record carries the mode in ``isolation`` (see ``isolation.describe``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

SANDBOX_HOME = "/home/mcp"
SYSTEM_DIRS = ("/usr", "/etc", "/opt")
HIDDEN_DIRS = ("/root", "/home", "/tmp", "/run", "/var/tmp", "/mnt", "/media", "/srv")
MERGED_USR_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is not installed or cannot create namespaces here."""


def bwrap_path() -> str:
    """Path of ``bwrap``; raises ``SandboxUnavailable`` when it is not on PATH."""
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    return found


def cache_root() -> Path:
    """Package caches shared by sandboxed launches (npm, uv): never the user's own."""
    base = os.environ.get("MCP_CONTEXT_COST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mcp-context-cost")
    return Path(base) / "sandbox"


def visible_roots() -> list[str]:
    """Host directories bound read-only into the sandbox: system dirs plus this Python's prefixes
    (where ``uvx`` and the interpreter live)."""
    roots = [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    for prefix in {sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}:
        if prefix and os.path.isdir(prefix) and not any(_under(prefix, r) for r in roots):
            roots.append(prefix)
    return roots


def sandbox_path(path: str) -> str:
    """``path`` (a PATH value) keeping only directories visible inside the sandbox."""
    roots = visible_roots() + [d for d in MERGED_USR_LINKS if os.path.exists(d)]
    return os.pathsep.join(p for p in path.split(os.pathsep) if p and any(_under(p, r) for r in roots))


def bwrap_argv(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """Wrap resolved ``argv`` for bubblewrap. Returns ``(argv, env)``: the environment is given to
    bwrap's own process (not as ``--setenv`` arguments, which would show values in ``ps``).
    ``cwd`` (a fresh temp directory) is the only writable host directory besides the caches."""
    caches = cache_root()
    (caches / "npm").mkdir(parents=True, exist_ok=True)
    (caches / "uv").mkdir(parents=True, exist_ok=True)
    args = [bwrap_path(), "--die-with-parent", "--unshare-all", "--share-net", "--proc", "/proc", "--dev", "/dev"]
    for link in MERGED_USR_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
    for hidden in HIDDEN_DIRS:  # before the binds below, some of which live under these
        args += ["--tmpfs", hidden]
    for root in visible_roots():
        args += ["--ro-bind", root, root]
    resolv = os.path.realpath("/etc/resolv.conf")
    if not _under(resolv, "/etc") and os.path.exists(resolv):  # e.g. systemd-resolved's stub in /run
        args += ["--ro-bind", resolv, resolv]
    args += ["--dir", SANDBOX_HOME, "--bind", str(caches / "npm"), f"{SANDBOX_HOME}/.npm",
             "--bind", str(caches / "uv"), f"{SANDBOX_HOME}/.cache/uv"]
    for folder in _script_dirs(argv):
        args += ["--ro-bind", folder, folder]
    args += ["--bind", str(cwd), str(cwd), "--chdir", str(cwd), "--"]
    inner = dict(env, HOME=SANDBOX_HOME, TMPDIR="/tmp", PATH=sandbox_path(env.get("PATH", "")))
    return args + list(argv), inner


def docker_argv(argv: list[str], env_names: list[str], image: str, workdir: str = "/work",
                memory: str = "2g", cpus: str = "1", pids: int = 512) -> list[str]:
    """``docker run`` argv for one server: removed on exit, stdin attached, resource limits, no
    host mounts or credentials, env passed by NAME only (``-e NAME`` reads the value from the docker
    client's environment, so no value appears in the argv)."""
    args = ["docker", "run", "--rm", "-i", "--init", f"--memory={memory}", f"--cpus={cpus}",
            f"--pids-limit={pids}", "--security-opt=no-new-privileges", "--cap-drop=ALL",
            "--network=bridge", f"--workdir={workdir}", "--tmpfs", "/tmp"]
    for name in env_names:
        args += ["-e", name]
    return args + [image] + list(argv)


# Pinned images per launcher (tags pinned; digests are resolved by the sweep workflow on GitHub).
DOCKER_IMAGES = {
    "npx": "node:22.21.1-bookworm-slim",
    "uvx": "ghcr.io/astral-sh/uv:0.9.13-python3.12-bookworm-slim",
}


def docker_image_for(program: str) -> str:
    """The pinned image for a launcher name (``npx``, ``uvx``; anything else gets the node image)."""
    return DOCKER_IMAGES.get(os.path.basename(program), DOCKER_IMAGES["npx"])


def _script_dirs(argv: list[str]) -> list[str]:
    """Folders of existing files named by absolute path in argv (a script and its sibling modules)
    that the sandbox would not otherwise see, read-only. A directory argument is never bound: a
    server asked to serve /tmp sees the sandbox's fresh /tmp."""
    roots = visible_roots()
    files = [a for a in argv[1:] if os.path.isabs(a) and os.path.isfile(a) and not any(_under(a, r) for r in roots)]
    return sorted({os.path.dirname(f) for f in files})


def _under(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")
