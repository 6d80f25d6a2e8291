"""The pull request's base commit, checked out in a worktree outside the workspace, built and measured like the head.

Rule: docs/ACTION.md, "Pull requests: the comparison and the comment".
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

BUILD_TIMEOUT_SECONDS = 1800
# git refuses a repository another user owns (the container action runs as root over the runner's
# checkout): these git commands alone trust it, through their environment.
TRUSTED = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}
MAX_BUILD_LOG = 64 * 1024


class BaseError(RuntimeError):
    """The base commit could not be checked out or built; the message says why."""


def build(script: str, cwd: Path, environ: Mapping[str, str]) -> str:
    """Run ``script`` with ``bash -e`` in ``cwd``; its output's tail. Raises :class:`BaseError`
    when it fails or runs out of time."""
    env = {k: v for k, v in environ.items() if not k.startswith("INPUT_") and k != "GITHUB_TOKEN"}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(["bash", "-e", "-c", script], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = process.wait(timeout=BUILD_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            code = None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # what the build left running, too
        process.wait()
        size = log.seek(0, os.SEEK_END)
        log.seek(max(0, size - MAX_BUILD_LOG))
        tail = log.read().decode("utf-8", "replace")
    if code is None:
        raise BaseError(f"the build in {cwd.name} ran past {BUILD_TIMEOUT_SECONDS} s")
    if code != 0:
        raise BaseError(f"the build in {cwd.name} exited {code}")
    return tail


def repository_root(path: Path) -> Path:
    """The work tree root of the git repository holding ``path``. Raises :class:`BaseError`."""
    import git  # GitPython is slow to import; only a base comparison needs it

    try:
        root = git.Repo(path, search_parent_directories=True).working_tree_dir
    except git.exc.GitError as exc:
        raise BaseError(f"the working directory is not in a git repository ({type(exc).__name__})") from None
    if root is None:  # a bare repository
        raise BaseError("the working directory is not in a git repository (no work tree)")
    return Path(root).resolve()


@contextlib.contextmanager
def worktree(root: Path, commit: str) -> Iterator[Path]:
    """The work tree of ``commit`` in a temporary folder, removed afterwards."""
    import git  # GitPython is slow to import; only a base comparison needs it

    repo = git.Repo(root)
    with repo.git.custom_environment(**TRUSTED):
        folder = Path(tempfile.mkdtemp(prefix="mcp-context-cost-base-"))
        tree = folder / "tree"
        try:
            try:
                repo.git.rev_parse("--verify", "--quiet", f"{commit}^{{commit}}")
            except git.exc.GitCommandError:
                try:
                    repo.git.fetch("--no-tags", "--depth=1", "origin", commit)
                except git.exc.GitCommandError:
                    raise BaseError(f"the base commit {commit[:12]} is not in the checkout and could not be fetched "
                                    "(check out with fetch-depth: 0)") from None
            try:
                repo.git.worktree("add", "--detach", str(tree), commit)
            except git.exc.GitCommandError as exc:
                raise BaseError(f"the base commit {commit[:12]} cannot be checked out (git exited "
                                f"{exc.status})") from None
            yield tree
        finally:
            with contextlib.suppress(git.exc.GitCommandError):
                repo.git.worktree("remove", "--force", str(tree))
            with contextlib.suppress(git.exc.GitCommandError):
                repo.git.worktree("prune")
            shutil.rmtree(folder, ignore_errors=True)


def repoint(command: str, root: Path, tree: Path) -> str:
    """``command`` with ``root`` in its arguments replaced by ``tree``; :class:`BaseError` when such a path leaves the
    worktree."""
    args = [arg.replace(str(root), str(tree)) for arg in shlex.split(command)]
    for arg in args:
        if arg.startswith(str(tree)):
            _inside(Path(arg), tree, "a path in the command")
    return shlex.join(args)


def relocate(path: Path, root: Path, tree: Path) -> Path:
    """``path`` (inside ``root``) at the same place in ``tree``; :class:`BaseError` when it leaves the worktree."""
    return _inside(tree / path.resolve().relative_to(root), tree, "the working directory")


def _inside(path: Path, tree: Path, what: str) -> Path:
    try:
        path.resolve().relative_to(tree.resolve())
    except ValueError:
        raise BaseError(f"{what} resolves outside the base commit's worktree (a symbolic link in that commit): "
                        "the base was not built or measured") from None
    except (OSError, RuntimeError):
        raise BaseError(f"{what} cannot be resolved in the base commit's worktree") from None
    return path
