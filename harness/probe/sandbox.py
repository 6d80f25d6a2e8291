"""Isolation modes (``host``, ``sandbox`` with bubblewrap, ``docker``): their argv, and which host paths a server
may see. docs/SECURITY.md, "Isolation".
"""

from __future__ import annotations

import glob
import hashlib
import os
import pwd
import re
import shutil
import sys
from pathlib import Path

from harness.util import names, user_cache

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
SANDBOX_OWN = ("/proc", "/dev", "/sys")  # the sandbox has its own (or none): a host file there is never shown
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


# Paths that hold credentials wherever they lie (a home folder, a project): matched against the last
# components of a path, each component a glob. In a shown folder each is masked (a file by an empty
# one, a folder by an empty tmpfs); a file or folder a command names that is one, or lies in one, is
# refused. docs/SECURITY.md lists them.
SECRET_PATHS = tuple(tuple(p.split("/")) for p in (
    ".ssh", ".aws", ".azure", ".gnupg", ".docker", ".kube", ".password-store", ".terraform.d", ".vault-token",
    ".config/gh", ".config/hub", ".config/gcloud", ".config/op", ".config/rclone", ".local/share/keyrings",
    ".npmrc", ".yarnrc.yml", ".netrc", "_netrc", ".git-credentials", ".git/config", ".pypirc", ".pgpass", ".my.cnf",
    ".s3cfg", ".boto", ".dockercfg", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".composer/auth.json", ".env", ".env.*", ".envrc", "*.pem", "*.key", "id_rsa*", "id_ecdsa*", "id_ed25519*",
    "id_dsa*", "*.p12", "*.pfx", "*.jks", "*.keystore", ".htpasswd", "*.tfstate", "*.tfstate.backup",
    "credentials", "credentials.json", "client_secret*.json", "token.json", ".claude/.credentials.json",
    ".codex/auth.json", ".gemini/oauth_creds.json", ".config/github-copilot", ".config/containers/auth.json",
    ".huggingface", ".cache/huggingface/token", ".kaggle", ".m2/settings.xml", ".gradle/gradle.properties",
))
# Folders a secret search does not descend into (installed packages, caches, git's object store):
# they are large and hold what a registry published, not what a person keeps.
NOT_SEARCHED = ("node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache")
MAX_SEARCHED = 20_000  # entries searched for secret paths in one shown folder; more is refused


class SandboxUnavailable(RuntimeError):
    """bubblewrap is not installed or cannot create namespaces here."""


def bwrap_path() -> str:
    """Path of ``bwrap``; raises ``SandboxUnavailable`` when it is not on PATH."""
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    return found


def cache_root() -> Path:
    """Where sandboxed launches keep package caches: never the user's own."""
    return user_cache.folder("sandbox")


def server_cache(name: str, launch: str) -> Path:
    """One server's own package cache, keyed by name and launch command: never shared."""
    digest = hashlib.sha256(f"{name}\0{launch}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    label = name if names.is_result_name(name) else "server"  # a name becomes a path only if it is a slug
    return cache_root() / "servers" / f"{label}-{digest}"


def visible_roots() -> list[str]:
    """Host directories bound read-only: system directories plus this Python's prefixes."""
    roots = [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    # in a fixed order, not a set's: the list reaches the record's shownHostPaths and bwrap's argv
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))]):
        if prefix and any(_under(prefix, r) for r in roots):
            prefix = os.path.realpath(prefix)  # a link in a shown root (/opt/venv to another disk) leads here
        # a Python built with --prefix=$HOME has the home as its prefix: never shown, as no home is
        if (prefix and os.path.isdir(prefix) and not any(_under(prefix, r) for r in roots)
                and folder_problem(os.path.realpath(prefix)) is None):
            roots.append(prefix)
    return roots


def sandbox_path(path: str) -> str:
    """``path`` (a PATH value) keeping only directories visible inside the sandbox."""
    roots = visible_roots() + [d for d in MERGED_USR_LINKS if os.path.exists(d)]
    return os.pathsep.join(p for p in path.split(os.pathsep) if p and any(_under(p, r) for r in roots))


def bwrap_argv(argv: list[str], workdir: Path, cache: Path, args_fd: int, shown: tuple[str, ...] = (),
               start: Path | None = None, files: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """``argv`` wrapped for bubblewrap: ``workdir`` and ``cache`` writable, ``shown`` and ``files`` read-only.
    Raises ``ValueError`` for a path that may not be shown."""
    shown = checked_dirs(shown)
    files = checked_files(files)
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
    for folder in shown:
        args += folder_masks(folder, shown)
    args += secret_masks()
    resolv = os.path.realpath("/etc/resolv.conf")
    if not _under(resolv, "/etc") and os.path.exists(resolv):  # e.g. systemd-resolved's stub in /run
        args += ["--ro-bind", resolv, resolv]
    args += ["--dir", SANDBOX_HOME, "--bind", str(cache / "npm"), f"{SANDBOX_HOME}/.npm",
             "--bind", str(cache / "uv"), f"{SANDBOX_HOME}/.cache/uv"]
    args += ["--bind", str(workdir), SANDBOX_WORKDIR, "--chdir", str(start or SANDBOX_WORKDIR)]
    for host, inside in files:  # last: a file may be shown inside the working directory
        args += ["--ro-bind", host, inside]
    return args + ["--"] + list(argv)


def shown_dirs(vouched: tuple[str, ...]) -> tuple[str, ...]:
    """``vouched`` plus the folders named in ``SHOWN_VARIABLE``."""
    extra = [d for d in os.environ.get(SHOWN_VARIABLE, "").split(os.pathsep) if d]
    return tuple(vouched) + tuple(d for d in extra if d not in vouched)


def checked_dirs(dirs) -> tuple[str, ...]:
    """``dirs`` as real absolute paths; raises ``ValueError`` for one that may not be shown (``folder_problem``,
    or named by a secret path)."""
    found: list[str] = []
    for folder in dirs:
        real = os.path.realpath(folder)
        if not (os.path.isabs(folder) and os.path.isdir(real)):
            raise ValueError(f"{folder} is not an existing absolute directory, so it cannot be shown to the sandbox")
        if (why := folder_problem(real)) is not None:
            named = folder if real == os.path.normpath(folder) else f"{folder} leads to {real}, which"
            raise ValueError(f"{named} {why}, so it is never shown to the sandbox")
        if (pattern := secret_part(folder)) is not None:  # a secret folder kept elsewhere through a link
            raise ValueError(f"{folder} is or lies in a secret path ({pattern}), so it is never shown to the sandbox")
        if real not in found:
            found.append(real)
    return tuple(found)


def folder_problem(real: str) -> str | None:
    """Why the real folder ``real`` may not be shown, as a phrase after its name, or ``None``."""
    homes = home_folders()
    held = sorted(home for home in homes if _under(home, real) and home != os.path.normpath(real))
    if held:
        own = os.path.realpath(os.path.expanduser("~"))
        return f"holds the home folder {own if own in held else held[0]}"
    if os.path.normpath(real) in homes:
        return "is a home folder"
    for cache in (cache_root(), *user_cache.real_folders()):
        if _under(os.path.realpath(cache), real):
            return "holds the harness's own caches"
    if (pattern := secret_part(real)) is not None:
        return f"is or lies in a secret path ({pattern})"
    return masked_by_sandbox(real)


def masked_by_sandbox(real: str) -> str | None:
    """Why ``real`` may not be shown through a link (in /proc, /dev, /sys, or a masked secret), or ``None``."""
    if any(_under(real, d) for d in SANDBOX_OWN):
        return "lies in /proc, /dev or /sys (the sandbox has its own)"
    secret = list(SECRET_FILES) + [p for pattern in SECRET_GLOBS for p in glob.glob(pattern)]
    if any(os.path.realpath(f) == real for f in secret) or any(_under(real, os.path.realpath(d)) for d in SECRET_DIRS):
        return "is a host secret path the sandbox masks"
    return None


def checked_files(files) -> tuple[tuple[str, str], ...]:
    """``files`` with host paths resolved; raises ``ValueError`` for one that may not be shown."""
    found: list[tuple[str, str]] = []
    for host, inside in files:
        real = os.path.realpath(host)
        if not (os.path.isabs(host) and os.path.isfile(real)):
            raise ValueError(f"{host} is not an existing file named by an absolute path, so it cannot be shown")
        for path in (host, real, inside):
            if (pattern := secret_part(path)) is not None:
                raise ValueError(f"{host} is or lies in a secret path ({pattern}), so it is never shown to the sandbox")
        if (why := masked_by_sandbox(real)) is not None:
            raise ValueError(f"{host} leads to {real}, which {why}, so it is never shown to the sandbox")
        inside = os.path.normpath(inside)
        covered = [SANDBOX_HOME, *SYSTEM_DIRS, *MERGED_USR_LINKS, *SANDBOX_OWN]
        if not os.path.isabs(inside) or (any(_under(inside, d) for d in covered)
                                         and not _under(inside, SANDBOX_WORKDIR)) or inside == SANDBOX_WORKDIR:
            raise ValueError(f"{host} cannot be shown at {inside} inside the sandbox")
        if (real, inside) not in found:
            found.append((real, inside))
    return tuple(found)


def home_folders() -> set[str]:
    """Every home folder of this machine, as real paths."""
    homes = {os.path.expanduser("~"), os.environ.get("HOME") or "~", "/root"}
    try:
        homes |= {entry.pw_dir for entry in pwd.getpwall() if entry.pw_dir.startswith("/")}
    except OSError:
        pass
    return {os.path.realpath(home) for home in homes if os.path.isabs(home)}


def _secret_pattern(suffix: str) -> re.Pattern[str]:
    spelled = ("/".join(re.escape(c).replace(r"\*", "[^/]*") for c in parts) for parts in SECRET_PATHS)
    # any case: on a case-insensitive file system ``.SSH`` is ``.ssh``, and masking more costs nothing
    return re.compile(r"(?:^|/)(" + "|".join(spelled) + ")" + suffix, re.IGNORECASE)


_SECRET_ANYWHERE = _secret_pattern("(?=/|$)")
_SECRET_LAST = _secret_pattern("$")


def secret_part(path: str) -> str | None:
    """The ``SECRET_PATHS`` entry ``path`` is or lies in, else ``None``."""
    found = _SECRET_ANYWHERE.search(os.path.normpath(path))
    return found.group(1) if found else None


def folder_masks(folder: str, shown: tuple[str, ...] = ()) -> list[str]:
    """bwrap arguments masking every secret path in ``folder``, and what a secret path that is a link leads to
    in ``folder`` or another of the ``shown`` folders (``.env -> settings/prod.env``); ``ValueError`` past
    ``MAX_SEARCHED``."""
    args: list[str] = []
    linked: dict[str, None] = {}  # masked last: a folder's tmpfs goes over the masks inside it
    searched, stack = 0, [folder]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            searched += 1
            if searched > MAX_SEARCHED:
                raise ValueError(f"{folder} holds more than {MAX_SEARCHED:,} entries to search for secret files, so "
                                 "it is not shown to the sandbox: show the server's own file or a smaller folder")
            if entry.is_symlink():  # shown as a link: what it leads to is masked when it is shown too
                secret = [entry.path] if _SECRET_LAST.search(entry.path) else _secret_beyond(entry.path)
                for target in map(os.path.realpath, secret):
                    if any(_under(target, d) for d in (folder, *shown)) and not _SECRET_ANYWHERE.search(target):
                        linked[target] = None
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if _SECRET_LAST.search(entry.path):  # what lies above was searched already
                args += _mask(entry.path)
            elif is_dir and entry.name not in NOT_SEARCHED and os.path.basename(current) != ".git":
                stack.append(entry.path)
    return args + [arg for target in linked if not _above(target, linked) for arg in _mask(target)]


# The first parts of the secret paths of more than one part (``.config`` of ``.config/gh``), in lower case, and
# what follows each.
_SECRET_REST = [(tuple(p.lower() for p in parts[:i]), parts[i:]) for parts in SECRET_PATHS for i in range(1, len(parts))]


def _secret_beyond(link: str) -> list[str]:
    """The secret paths a link on their way makes (``.config -> dotfiles/config``: ``.config/gh``) that exist."""
    names = tuple(link.lower().split("/"))
    paths = (os.path.join(link, *rest) for first, rest in _SECRET_REST if names[-len(first):] == first)
    return [path for path in paths if os.path.lexists(path)]


def _above(path: str, paths) -> bool:
    """Whether a folder above ``path`` is one of ``paths`` (a set or dict: one look-up per folder above)."""
    parent = os.path.dirname(path)
    while parent != path:
        if parent in paths:
            return True
        path, parent = parent, os.path.dirname(parent)
    return False


def _mask(path: str) -> list[str]:
    """bwrap arguments hiding the real file or folder ``path``: an empty read-only tmpfs or ``/dev/null``."""
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", path, "--remount-ro", path]
    return ["--ro-bind", "/dev/null", path] if os.path.isfile(path) and not os.path.islink(path) else []


def named_paths(argv: list[str], cwd: str | os.PathLike) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """``(folders, files)`` to show for a command the user typed; never use it on a command someone else wrote."""
    roots = visible_roots() + [d for d in MERGED_USR_LINKS if os.path.exists(d)]
    folders: list[str] = []
    files: list[tuple[str, str]] = []
    candidates = [a for a in argv[:1] if "/" in a] + list(argv[1:])
    candidates += [a.split("=", 1)[1] for a in argv[1:] if a.startswith("-") and "=" in a]
    for named in candidates:
        relative = not os.path.isabs(named)
        if not named or "\0" in named or (relative and (named.startswith("~") or ".." in Path(named).parts)):
            continue
        host = os.path.normpath(os.path.join(cwd, named))
        if not relative and any(_under(host, r) for r in roots) \
                and not any(_under(os.path.realpath(host), r) for r in roots + list(SANDBOX_OWN)):
            host = os.path.realpath(host)  # a link in a shown root leads out of it: shown where it leads
        if os.path.isfile(host):
            if any(_under(host, r) for r in roots + list(SANDBOX_OWN)):
                continue
            inside = os.path.join(SANDBOX_WORKDIR, os.path.normpath(named)) if relative else host
            files += checked_files([(host, inside)])
        elif (os.path.isdir(host) and not relative and host not in HIDDEN_DIRS
              and not any(_under(host, r) for r in roots + list(SANDBOX_OWN))):
            for folder in checked_dirs([host]):
                folder_masks(folder)  # refused now, before anything is launched, when too large to search
                folders += [folder] if folder not in folders else []
    return tuple(folders), tuple(dict.fromkeys(files))


def shown_host_paths(host_dirs: tuple[str, ...], host_files: tuple[tuple[str, str], ...]) -> list[str]:
    """The record's ``shownHostPaths`` for a sandboxed launch. Never raises."""
    paths = list(visible_roots())
    for folder in shown_dirs(host_dirs):
        try:
            paths += [d for d in checked_dirs([folder]) if not any(_under(d, r) for r in visible_roots())]
        except ValueError:
            continue
    for pair in host_files:
        try:
            paths += [real for real, _ in checked_files([pair])]
        except ValueError:
            continue
    home = os.path.realpath(os.path.expanduser("~"))
    shown = ["~" + p[len(home):] if home != "/" and _under(p, home) else p for p in paths]
    return list(dict.fromkeys(shown))


def env_args(env: dict[str, str]) -> bytes:
    """The environment as bwrap ``--args`` with the sandbox's HOME, TMPDIR and PATH."""
    return env_args_verbatim(dict(env, HOME=SANDBOX_HOME, TMPDIR="/tmp", PATH=sandbox_path(env.get("PATH", ""))))


def env_args_verbatim(inner: dict[str, str]) -> bytes:
    """``env_args`` for an environment already as the server sees it, kept as it is."""
    parts = ["--clearenv"]
    for name, value in inner.items():
        parts += ["--setenv", name, value]
    if any("\0" in part for part in parts):
        raise ValueError("an environment name or value holds a NUL byte")
    return b"".join(part.encode("utf-8", "surrogateescape") + b"\0" for part in parts)


def secret_masks() -> list[str]:
    """bwrap arguments hiding the host secret files and folders that exist here."""
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
    """``docker run`` argv for one server; values from ``env_file`` or by name, never in argv."""
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
    """``NAME=value`` lines for ``--env-file``; ``ValueError`` for a line break or NUL."""
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
    """The pinned image for a launcher name (the node image for any other)."""
    return DOCKER_IMAGES.get(os.path.basename(program), DOCKER_IMAGES["npx"])


def _under(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")
