"""One commit per publish, under a bot identity, holding exactly the paths that publish wrote
(issue #4, "Publish and commit"; issue #10, "Commit scope").

The database lives in ``PUBLISHED``. Before a ``--commit`` run measures anything, every change under
those paths that is not committed (modified, deleted, untracked or staged: an ad-hoc run's record,
the output of an earlier run without ``--commit``) is a reason to refuse (:func:`dirty_published`):
a bot commit must never carry what its sweep did not make. The commit then names its files one by
one (:func:`commit_paths`) — never a folder — so nothing else under them rides along, and whatever
else the user has staged stays staged and out of it.

Temporary files. Every published file is written through a temporary sibling
``.<name>.<8 random characters>.tmp`` (``harness.util.atomic``), which matches no published path and
is never named in a commit. One left by a killed run is removed by the next publish under the lock
(:func:`sweep_temp_files`).
"""

from __future__ import annotations

import re
from pathlib import Path

import git

from harness.util.untrusted import escape

BOT = git.Actor("mcp-context-cost-bot", "mcp-context-cost-bot@users.noreply.github.com")
# Only what a publish writes: hand-written docs (docs/*.md) never ride along in a bot commit.
PUBLISHED = ("results", "badges", "history.csv", "docs/index.html", "docs/calculator.html", "docs/servers",
             "docs/sparklines", "docs/trends")
# Not published, but what the pages are drawn from besides the published files (harness.pages.regen).
INPUTS = ("servers.yaml",)
TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
# Where the atomic writer's temporaries can appear: the published folders, and beside the
# published files of the root and of docs/.
_TEMP_TREES = ("results", "badges", "docs/servers", "docs/sparklines", "docs/trends")
_TEMP_FLAT = (".", "docs")


class NotARepository(ValueError):
    """``--commit`` was asked for a directory that is not a git repository."""


def require_repo(root: Path) -> git.Repo:
    """The repository at ``root``; raises ``NotARepository`` (checked before anything is measured)."""
    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise NotARepository(f"{root} is not a git repository: --commit needs one") from None


def dirty_published(root: Path) -> list[str]:
    """Repository paths under ``PUBLISHED`` that differ from HEAD in the index or the working tree
    (untracked files included), sorted. Temporary files of the atomic writer are not listed."""
    return sorted(p for p in changed_paths(require_repo(root), PUBLISHED) if not TEMP_NAME.match(Path(p).name))


def dirty_inputs(root: Path) -> list[str]:
    """``INPUTS`` (the catalog the pages are drawn from) when it differs from HEAD, sorted: a bot
    commit of pages drawn from an uncommitted catalog would say what no commit holds."""
    return sorted(changed_paths(require_repo(root), INPUTS))


def changed_paths(repo: git.Repo, pathspecs) -> set[str]:
    """Paths matching ``pathspecs`` that ``git status`` reports (staged, unstaged, untracked)."""
    out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", *pathspecs)
    return {entry[3:] for entry in out.split("\0") if len(entry) > 3}


def commit_paths(root: Path, message: str, paths: list[str]) -> str | None:
    """Commit exactly ``paths`` (repository-relative files, added, changed or deleted) as the bot;
    returns the new commit's hexsha, or ``None`` when none of them changed (no commit is made then).

    Whatever else the user has staged stays staged and out of the commit (``git commit --only``).
    Raises ``harness.db.confine.Unsafe`` (nothing committed) for a path outside ``PUBLISHED``.
    """
    from harness.db.confine import Unsafe, in_scope  # confine reads PUBLISHED from here

    outside = [p for p in paths if not in_scope(p)]
    if outside:  # a bot commit never carries a path a publish does not own (servers.yaml, .git/…)
        raise Unsafe("not published paths, never committed by a publish: "
                     + ", ".join(escape(repr(p))[:120] for p in outside[:5]))
    repo = require_repo(root)
    _clear_stale_lock(repo)
    wanted = sorted(set(paths) & changed_paths(repo, sorted(set(paths)))) if paths else []
    if not wanted:
        return None
    repo.git.add("--all", "--", *wanted)
    identity = {"GIT_AUTHOR_NAME": BOT.name, "GIT_AUTHOR_EMAIL": BOT.email,
                "GIT_COMMITTER_NAME": BOT.name, "GIT_COMMITTER_EMAIL": BOT.email}
    with repo.git.custom_environment(**identity):
        repo.git.commit("--only", "--no-verify", "-m", message, "--", *wanted)
    return repo.head.commit.hexsha


def commit_published(root: Path, message: str) -> str | None:
    """Commit every pending change under ``PUBLISHED`` (kept for callers outside a sweep, e.g. a
    test setting up a repository); a sweep commits only its own paths with :func:`commit_paths`."""
    return commit_paths(root, message, dirty_published(root))


def sweep_temp_files(root: Path) -> list[str]:
    """Delete the atomic writer's temporary files a killed run left under ``root``'s published
    folders; returns their repository paths. Call only while holding the repository lock."""
    root = Path(root)
    found = []
    for folder in _TEMP_TREES:
        if (root / folder).is_dir():
            found += [p for p in (root / folder).rglob(".*.tmp") if p.is_file() and TEMP_NAME.match(p.name)]
    for folder in _TEMP_FLAT:
        if (root / folder).is_dir():
            found += [p for p in (root / folder).glob(".*.tmp") if p.is_file() and TEMP_NAME.match(p.name)]
    for path in found:
        path.unlink(missing_ok=True)
    return sorted(str(p.relative_to(root)) for p in found)


def _clear_stale_lock(repo: git.Repo) -> None:
    """A sweep killed inside ``git add``/``commit`` leaves ``index.lock`` behind — or, killed while
    gitpython moves the branch, the branch's ref lock or a reflog lock, any of which makes every
    later commit raise. The next sweep removes them so recovery needs no manual cleanup (the sweep
    holds the repository's publish lock, harness.db.lock)."""
    git_dir = Path(repo.git_dir)
    locks = [git_dir / "index.lock", git_dir / "logs" / "HEAD.lock"]
    if not repo.head.is_detached:
        branch = repo.head.reference.path  # e.g. refs/heads/main
        locks += [git_dir / f"{branch}.lock", git_dir / "logs" / f"{branch}.lock"]
    for lock in locks:
        if lock.exists():
            lock.unlink()
