"""A warm npx install taken from the cache without running npx (host, exact pins only).

After an install for an exact ``npx -y <package>@<version>`` on the host, what the resolver saw (argv,
environment, bin folder) is kept beside the cache with the inputs it came from. A later install with the same
inputs starts from it instead of running npx, only while the cache still proves that package installed complete:

- the procedure's marker is there;
- the install is in the one folder npx uses for the spec, and names exactly that spec;
- the package's own package.json has that name and version;
- every package its lockfile names is present;
- its bin is inside it, and no link leads out of the install;
- no npm lock is held;
- npm, node, every npm config file and every project or global folder npx consults are unchanged;
- the kept entry says nothing npx would not: the bin and the plan's arguments as npm quotes them, the
  host's variables, npm's own.

Nothing that may hold a secret is kept: no declared value, no URL with a user or password, no variable named
like a credential.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from harness.probe import npx_cache, reaper, resolve, server_env, workdir
from harness.probe.target import Target
from harness.util import atomic, user_cache


INSTALLED_DIR = "installed"  # under the harness's cache folder
INSTALLED_BYTES = 1 << 20
INSTALLED_FORMAT = 1
_EXACT = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
_USERINFO = re.compile(r"://[^/\s]*@")  # a URL carrying a user or password: never written to disk


def ready(target: Target, isolation: str, pass_declared_values: bool,
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
    """The kept entry's file: one per launch and harness interpreter (two installs of the harness never evict
    each other's entry)."""
    slot = json.dumps([isolation, resolve.dumper_digest(), how.argv, cwd]).encode("utf-8", "surrogatepass")
    return user_cache.folder(INSTALLED_DIR) / f"{hashlib.sha256(slot).hexdigest()[:32]}.json"


def _installed_key(isolation: str, how: resolve.Plan, env: dict[str, str], cwd: str) -> str:
    text = json.dumps([INSTALLED_FORMAT, npx_cache.PROCEDURE, resolve.dumper_digest(), isolation, how.argv, cwd,
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
    with contextlib.suppress(OSError):
        atomic.write_bytes(path, json.dumps(entry).encode("utf-8", "surrogatepass"), mode=0o600)


def installed(target: Target, isolation: str, how: resolve.Plan, env: dict[str, str],
              npm_cache: Path) -> resolve.Resolved | None:
    """The install an earlier run resolved with these same inputs, when the cache still proves it; else ``None``."""
    cwd = str(workdir.own_path(target.name))
    text = npx_cache.plain_text(_installed_path(isolation, how, cwd), INSTALLED_BYTES)
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
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
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
    install = npx_cache.install_dir(found.executable, "host", npm_cache)
    if install is None or install.name != _npx_folder(spec) or npx_cache.untrusted_reason(install, True) is not None \
            or os.path.lexists(install / npx_cache.NPM_LOCK):
        return None
    package = install / "node_modules" / how.package
    try:
        manifest = json.loads(npx_cache.plain_text(install / "package.json", npx_cache.MANIFEST_BYTES) or "")
        own = json.loads(npx_cache.plain_text(package / "package.json", npx_cache.MANIFEST_BYTES) or "")
        locked = json.loads(npx_cache.plain_text(install / "package-lock.json", npx_cache.LOCKFILE_BYTES) or "")["packages"]
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
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
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
