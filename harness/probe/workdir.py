"""The working directory a server launches in: ``<cache>/work/<name>``, the same path every launch, emptied each
time; a fresh directory under ``<cache>/work/.apart-<name>`` while another launch holds it, or for a launch made
``apart``. What a killed harness left there is removed by the next launch of ``name`` that finds none in use.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from typing import IO
from contextvars import ContextVar
from pathlib import Path

from harness.probe import server_env
from harness.util import user_cache
from harness.probe.process import SpawnError

WORK_DIR = "work"
APART = ".apart-"  # no slug starts with a dot: never an entry's own directory
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,99}$")
# The throwaway repository's one commit has fixed dates, so its hash is the same at every launch.
_GIT_DATE = "2000-01-01T00:00:00+0000"
_GIT_NAME, _GIT_EMAIL = "mcp-context-cost", "mcp-context-cost@users.noreply.github.com"
_APART: ContextVar[bool] = ContextVar("mcp_context_cost_workdir_apart", default=False)


def base_dir() -> Path:
    """The folder holding every entry's working directory."""
    return user_cache.folder(WORK_DIR)


@contextlib.contextmanager
def launch_dir(name: str, needs_git: bool) -> Iterator[Path]:
    """Yield the empty working directory for one launch of ``name``; raises ``SpawnError``."""
    with _own_dir(name, needs_git) as path:
        yield path


@contextlib.contextmanager
def apart() -> Iterator[None]:
    """Within it (in this task's context), every launch takes a fresh temp directory and leaves
    ``<cache>/work/<name>`` to a launch made outside it."""
    token = _APART.set(True)
    try:
        yield
    finally:
        _APART.reset(token)


def own_path(name: str) -> Path:
    """The working directory ``name`` launches in while no other launch of ``name`` holds it."""
    if not _SLUG.match(name):
        name = "x-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return base_dir() / name


@contextlib.contextmanager
def _own_dir(name: str, needs_git: bool) -> Iterator[Path]:
    base = base_dir()
    name = own_path(name).name
    if _APART.get():
        with _fresh_dir(name, needs_git) as path:
            yield path
        return
    with _lock_file(base, f"{name}.lock") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # the same name is being launched elsewhere right now
            with _fresh_dir(name, needs_git) as path:
                yield path
            return
        path = base / name
        _empty(path)
        _reclaim(base, name)
        try:
            prepare_workdir(path, needs_git)
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)  # the next launch empties it again if this fails


@contextlib.contextmanager
def _fresh_dir(name: str, needs_git: bool) -> Iterator[Path]:
    # Under the cache, not /tmp: a harness killed by a signal leaves it where _reclaim finds it. Each user holds
    # a shared lock on .apart-<name>.lock; _reclaim removes the folder only under an exclusive one.
    base = base_dir()
    parent = base / f"{APART}{name}"
    with _lock_file(base, f"{APART}{name}.lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            parent.mkdir(exist_ok=True)
            fresh = tempfile.TemporaryDirectory(dir=parent)
        except OSError as exc:
            raise SpawnError(f"cannot create a working directory under {parent}: {exc}") from None
        with fresh as tmp:
            prepare_workdir(Path(tmp), needs_git)
            yield Path(tmp)


def _lock_file(base: Path, filename: str) -> IO[str]:
    try:
        base.mkdir(parents=True, exist_ok=True)
        return open(base / filename, "a+")
    except OSError as exc:
        raise SpawnError(f"cannot prepare the working directory under {base}: {exc}") from None


def _reclaim(base: Path, name: str) -> None:
    """Remove ``.apart-<name>`` when no launch uses it (what a harness killed mid-launch left). Never raises."""
    with contextlib.suppress(OSError), open(base / f"{APART}{name}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        shutil.rmtree(base / f"{APART}{name}", ignore_errors=True)


def _empty(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpawnError(f"cannot create the working directory {path}: {exc}") from None
    if any(path.iterdir()):  # rmtree could not remove something (permissions changed by the server)
        raise SpawnError(f"cannot empty the working directory {path}")


def prepare_workdir(path: Path, needs_git: bool) -> None:
    """Populate ``path``; git runs with the launch's minimal environment, no config and no hooks. Raises
    ``SpawnError``."""
    if not needs_git:
        return
    # Not gitpython: it starts git with a copy of the harness's whole environment, and keeps
    # ``git cat-file`` processes alive with it while the server runs.
    env = {**server_env.child_env(), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": _GIT_NAME, "GIT_AUTHOR_EMAIL": _GIT_EMAIL, "GIT_AUTHOR_DATE": _GIT_DATE,
           "GIT_COMMITTER_NAME": _GIT_NAME, "GIT_COMMITTER_EMAIL": _GIT_EMAIL, "GIT_COMMITTER_DATE": _GIT_DATE}
    try:
        (path / "README.md").write_text("throwaway repository for a measurement\n")
        for args in (["init", "-q"], ["add", "README.md"],
                     ["-c", "core.hooksPath=" + os.devnull, "commit", "-q", "--no-verify", "-m", "initial commit"]):
            subprocess.run(["git", *args], cwd=path, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           check=True, timeout=60)
    except subprocess.CalledProcessError as exc:
        why = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {exc.returncode}"]
        raise SpawnError(f"cannot prepare a git working directory: git {exc.cmd[1]}: {why[0][:200]}") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SpawnError(f"cannot prepare a git working directory: {exc}") from None
