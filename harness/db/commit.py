"""One commit per sweep, under a bot identity, with gitpython (issue #4, "Publish and commit")."""

from __future__ import annotations

from pathlib import Path

import git

BOT = git.Actor("mcp-context-cost-bot", "mcp-context-cost-bot@users.noreply.github.com")
# Only what a sweep writes: hand-written docs (docs/*.md) never ride along in a bot commit.
PUBLISHED = ("results", "badges", "history.csv", "docs/index.html", "docs/servers", "docs/sparklines", "docs/trends")


class NotARepository(ValueError):
    """``--commit`` was asked for a directory that is not a git repository."""


def require_repo(root: Path) -> git.Repo:
    """The repository at ``root``; raises ``NotARepository`` (checked before anything is measured)."""
    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise NotARepository(f"{root} is not a git repository: --commit needs one") from None


def commit_published(root: Path, message: str) -> str | None:
    """Commit the published paths under ``root`` — and only them — as the bot; returns the new
    commit's hexsha, or ``None`` when nothing changed (no commit is made then).

    Whatever else the user has staged stays staged and out of the commit (``git commit --only``).
    """
    repo = require_repo(root)
    _clear_stale_lock(repo)
    paths = [p for p in PUBLISHED if (Path(root) / p).exists() or _tracked(repo, p)]
    if not paths:
        return None
    repo.git.add("--all", "--", *paths)
    if repo.head.is_valid() and not repo.index.diff("HEAD", paths=paths):
        return None
    identity = {"GIT_AUTHOR_NAME": BOT.name, "GIT_AUTHOR_EMAIL": BOT.email,
                "GIT_COMMITTER_NAME": BOT.name, "GIT_COMMITTER_EMAIL": BOT.email}
    with repo.git.custom_environment(**identity):
        repo.git.commit("--only", "--no-verify", "-m", message, "--", *paths)
    return repo.head.commit.hexsha


def _tracked(repo: git.Repo, path: str) -> bool:
    return bool(repo.head.is_valid() and repo.git.ls_files("--", path))


def _clear_stale_lock(repo: git.Repo) -> None:
    """A sweep killed inside ``git add``/``commit`` leaves ``index.lock`` behind — or, killed while
    gitpython moves the branch, the branch's ref lock or a reflog lock, any of which makes every
    later commit raise. The next sweep removes them so recovery needs no manual cleanup (the sweep
    holds the repository's only writer)."""
    git_dir = Path(repo.git_dir)
    locks = [git_dir / "index.lock", git_dir / "logs" / "HEAD.lock"]
    if not repo.head.is_detached:
        branch = repo.head.reference.path  # e.g. refs/heads/main
        locks += [git_dir / f"{branch}.lock", git_dir / "logs" / f"{branch}.lock"]
    for lock in locks:
        if lock.exists():
            lock.unlink()
