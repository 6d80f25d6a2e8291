"""Isolation modes a server can be launched under (issue #6, "Isolation modes").

``host``    the server runs as a child of the harness with the minimal environment of
            ``environment.child_env`` — nothing else isolated.
``sandbox`` bubblewrap (``bwrap``): new user/pid/ipc/uts namespaces, every capability dropped, a
            fresh HOME and /tmp, the host's home directories and this checkout invisible, system
            directories read-only with the host's secret files in them masked, declared env
            names given dummy values, the network kept for package fetch, and a package cache of
            the server's own (installs stay warm across its launches; no other server sees it).
``docker``  one container per server (argv built by ``docker_argv``); runs for real on GitHub.

What reaches the host side (issue #9, kind 4): the ``bwrap`` process itself runs with an empty
environment. The server's environment is handed over as ``--clearenv --setenv NAME VALUE …``
arguments read from an inherited memory file (``--args FD``), so no value shows in ``ps`` or in
``/proc/<bwrap>/environ``, and nothing an entry sets can change how ``bwrap`` (a host-side C
program) loads or runs. ``docker`` gets the values from an ``--env-file`` read the same way.

What reaches the sandbox from the host: a fixed set (system directories read-only, a fresh
working directory and the server's own cache writable) plus the directories the target's builder
vouches for (``Target.host_dirs``, read-only). Nothing a command or a config *names* is bound in
on that account alone: a catalog command naming a host file once had that file's folder bound.

Every record carries the mode in ``isolation`` (see ``isolation.describe``).
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import sys
from pathlib import Path

from harness.util import names

SANDBOX_HOME = "/home/mcp"
# Where the launch's working directory appears inside the sandbox: one fixed path, so the host
# path of the stable per-entry directory (``workdir``) — and the folders above it — stay hidden,
# and a server that names its working directory says the same thing at every launch.
SANDBOX_WORKDIR = SANDBOX_HOME + "/work"
# Directories the person running the harness shows to every sandboxed server (read-only), e.g. a
# folder of local test servers a catalog names: ``os.pathsep``-separated absolute paths. The
# harness's own setting — an entry, a flag or a config can never set it (``envnames``).
SHOWN_VARIABLE = "MCP_CONTEXT_COST_SHOWN_DIRS"
SYSTEM_DIRS = ("/usr", "/etc", "/opt")
HIDDEN_DIRS = ("/root", "/home", "/tmp", "/run", "/var/tmp", "/mnt", "/media", "/srv")
MERGED_USR_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32")
# Host files and directories that hold secrets although they live in a visible system directory
# (docs/SECURITY.md lists them with the reason): each file is replaced by an empty one
# (``/dev/null``), each directory by an empty tmpfs. Only those that exist are masked.
SECRET_FILES = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
    "/etc/sudoers", "/etc/krb5.keytab", "/etc/environment", "/etc/apt/auth.conf", "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets", "/etc/ipsec.secrets", "/etc/mysql/debian.cnf", "/etc/ldap.secret",
    "/etc/pam_ldap.secret",
)
SECRET_GLOBS = ("/etc/ssh/ssh_host_*_key",)
SECRET_DIRS = (
    "/etc/ssl/private", "/etc/pki/tls/private", "/etc/pki/private", "/etc/apt/auth.conf.d", "/etc/sudoers.d",
    "/etc/NetworkManager/system-connections", "/etc/wpa_supplicant", "/etc/wireguard", "/etc/letsencrypt",
    "/etc/openvpn", "/etc/ipsec.d", "/etc/docker", "/etc/containerd", "/etc/libvirt/secrets", "/etc/ceph",
    "/etc/cups/ssl",
)


class SandboxUnavailable(RuntimeError):
    """bubblewrap is not installed or cannot create namespaces here."""


def bwrap_path() -> str:
    """Path of ``bwrap``; raises ``SandboxUnavailable`` when it is not on PATH."""
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    return found


def cache_root() -> Path:
    """Where sandboxed launches keep package caches (npm, uv): never the user's own."""
    base = os.environ.get("MCP_CONTEXT_COST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mcp-context-cost")
    return Path(base) / "sandbox"


def server_cache(name: str, launch: str) -> Path:
    """The package cache of one server: ``cache_root()/servers/<name>-<16 hex>`` with ``npm/`` and
    ``uv/`` inside, keyed by the name *and* the launch command (a changed command is a new
    cache). Installing an npm or PyPI package runs its code, so a cache shared between servers is
    one that any server can plant files in for the next to run (issue #9, kind 4); one cache per
    server keeps its installs warm across its own launches and exposes them to no other server."""
    digest = hashlib.sha256(f"{name}\0{launch}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    label = name if names.is_result_name(name) else "server"  # a name becomes a path only if it is a slug
    return cache_root() / "servers" / f"{label}-{digest}"


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


def bwrap_argv(argv: list[str], workdir: Path, cache: Path, args_fd: int, shown: tuple[str, ...] = (),
               start: Path | None = None) -> list[str]:
    """Wrap resolved ``argv`` for bubblewrap; run the result with an empty environment and
    ``args_fd`` (holding ``env_args(env)``) inherited. ``workdir`` (the launch's working directory,
seen inside at ``SANDBOX_WORKDIR``) and
    ``cache`` (``server_cache``: ``npm/`` and ``uv/`` are created) are the only writable host
    directories; ``shown`` (``Target.host_dirs``: directories the caller vouches for) are bound
    read-only and are the only other host directories the server sees. The server starts in
    ``start`` when given (it must lie in ``shown``), else in ``workdir``. Raises ``ValueError``
    for a ``shown`` directory that is not an existing absolute directory or a ``start`` outside them."""
    shown = checked_dirs(shown)
    if start is not None:
        start = Path(os.path.realpath(start))
        if not any(_under(str(start), d) for d in shown):
            raise ValueError(f"the working directory {start} is not in a directory shown to the sandbox")
    (cache / "npm").mkdir(parents=True, exist_ok=True)
    (cache / "uv").mkdir(parents=True, exist_ok=True)
    # --cap-drop ALL: run by root, bwrap would otherwise keep every capability inside, and a
    # server could remount its read-only binds writable (as an unprivileged user it drops them).
    args = [bwrap_path(), "--args", str(args_fd), "--die-with-parent", "--unshare-all", "--share-net",
            "--cap-drop", "ALL", "--proc", "/proc", "--dev", "/dev"]
    for link in MERGED_USR_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
    for hidden in HIDDEN_DIRS:  # before the binds below, some of which live under these
        args += ["--tmpfs", hidden]
    roots = visible_roots()
    for root in roots:
        args += ["--ro-bind", root, root]
    for folder in shown:  # before the masks and the writable binds, which must stay on top
        if not any(_under(folder, r) for r in roots):
            args += ["--ro-bind", folder, folder]
    args += secret_masks()
    resolv = os.path.realpath("/etc/resolv.conf")
    if not _under(resolv, "/etc") and os.path.exists(resolv):  # e.g. systemd-resolved's stub in /run
        args += ["--ro-bind", resolv, resolv]
    args += ["--dir", SANDBOX_HOME, "--bind", str(cache / "npm"), f"{SANDBOX_HOME}/.npm",
             "--bind", str(cache / "uv"), f"{SANDBOX_HOME}/.cache/uv"]
    args += ["--bind", str(workdir), SANDBOX_WORKDIR, "--chdir", str(start or SANDBOX_WORKDIR), "--"]
    return args + list(argv)


def shown_dirs(vouched: tuple[str, ...]) -> tuple[str, ...]:
    """The directories a launch shows: ``vouched`` (``Target.host_dirs``) plus those the person
    running the harness names in ``SHOWN_VARIABLE``."""
    extra = [d for d in os.environ.get(SHOWN_VARIABLE, "").split(os.pathsep) if d]
    return tuple(vouched) + tuple(d for d in extra if d not in vouched)


def checked_dirs(dirs) -> tuple[str, ...]:
    """``dirs`` as real absolute paths (symbolic links resolved: what is bound is what was checked);
    raises ``ValueError`` for one that is not an existing absolute directory."""
    found: list[str] = []
    for folder in dirs:
        real = os.path.realpath(folder)
        if not (os.path.isabs(folder) and os.path.isdir(real)):
            raise ValueError(f"{folder} is not an existing absolute directory, so it cannot be shown to the sandbox")
        if real not in found:
            found.append(real)
    return tuple(found)


def env_args(env: dict[str, str]) -> bytes:
    """The server's environment as bwrap arguments for ``--args FD``: ``--clearenv`` then one
    ``--setenv NAME VALUE`` per variable, NUL-separated, with the sandbox's own HOME, TMPDIR and
    PATH. Raises ``ValueError`` for a NUL in a name or value (the catalog refuses those first)."""
    inner = dict(env, HOME=SANDBOX_HOME, TMPDIR="/tmp", PATH=sandbox_path(env.get("PATH", "")))
    parts = ["--clearenv"]
    for name, value in inner.items():
        parts += ["--setenv", name, value]
    if any("\0" in part for part in parts):
        raise ValueError("an environment name or value holds a NUL byte")
    return b"".join(part.encode("utf-8", "surrogateescape") + b"\0" for part in parts)


def secret_masks() -> list[str]:
    """bwrap arguments hiding the host's secret files (``SECRET_FILES``, ``SECRET_GLOBS``,
    ``SECRET_DIRS``) that exist here; symbolic links are left alone (their targets are listed
    themselves or lie outside what the sandbox sees)."""
    args: list[str] = []
    files = list(SECRET_FILES) + sorted(p for pattern in SECRET_GLOBS for p in glob.glob(pattern))
    for path in files:
        if os.path.isfile(path) and not os.path.islink(path):
            args += ["--ro-bind", "/dev/null", path]
    for path in SECRET_DIRS:
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--tmpfs", path, "--remount-ro", path]
    return args


def docker_argv(argv: list[str], env_names: list[str], image: str, workdir: str = "/work",
                memory: str = "2g", cpus: str = "1", pids: int = 512, env_file: str | None = None) -> list[str]:
    """``docker run`` argv for one server: removed on exit, stdin attached, resource limits, no
    host mounts or credentials. Env values never appear in the argv: with ``env_file`` (e.g.
    ``/dev/fd/N`` holding ``env_file_text``) they are read from it, so the docker client's own
    environment holds none of them; otherwise each of ``env_names`` is passed by name (``-e NAME``
    reads the value from the client's environment)."""
    args = ["docker", "run", "--rm", "-i", "--init", f"--memory={memory}", f"--cpus={cpus}",
            f"--pids-limit={pids}", "--security-opt=no-new-privileges", "--cap-drop=ALL",
            "--network=bridge", f"--workdir={workdir}", "--tmpfs", "/tmp"]
    if env_file is not None:
        args += ["--env-file", env_file]
    else:
        for name in env_names:
            args += ["-e", name]
    return args + [image] + list(argv)


def env_file_text(env: dict[str, str]) -> bytes:
    """``NAME=value`` lines for ``docker run --env-file``. Raises ``ValueError`` naming the
    variable (never its value) when a value holds a line break, which that format cannot carry."""
    for name, value in env.items():
        if any(c in value or c in name for c in "\n\r\0"):
            raise ValueError(f"the value of {name} holds a line break or NUL, which docker --env-file cannot pass")
    return "".join(f"{name}={value}\n" for name, value in env.items()).encode("utf-8", "surrogateescape")


# Pinned images per launcher (tags pinned; digests are resolved by the sweep workflow on GitHub).
DOCKER_IMAGES = {
    "npx": "node:22.21.1-bookworm-slim",
    "uvx": "ghcr.io/astral-sh/uv:0.9.13-python3.12-bookworm-slim",
}


def docker_image_for(program: str) -> str:
    """The pinned image for a launcher name (``npx``, ``uvx``; anything else gets the node image)."""
    return DOCKER_IMAGES.get(os.path.basename(program), DOCKER_IMAGES["npx"])


def script_dirs(argv: list[str]) -> tuple[str, ...]:
    """Folders of existing files named by absolute path in ``argv[1:]`` (a script and its sibling
    modules) that the sandbox would not otherwise see: what ``measure --command`` and the tests
    vouch for in ``Target.host_dirs`` for a command *they* wrote. A directory argument is never
    included (a server asked to serve /tmp sees the sandbox's fresh /tmp). Never use it on a
    command someone else wrote: any file it names would become readable."""
    roots = visible_roots()
    files = [a for a in argv[1:] if os.path.isabs(a) and os.path.isfile(a) and not any(_under(a, r) for r in roots)]
    return tuple(sorted({os.path.dirname(f) for f in files}))


def _under(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")
