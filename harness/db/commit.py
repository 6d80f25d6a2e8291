"""One commit per sweep, under a bot identity, with gitpython (issue #4, "Publish and commit")."""

from __future__ import annotations

from pathlib import Path

import git

BOT = git.Actor("mcp-context-cost-bot", "mcp-context-cost-bot@users.noreply.github.com")
# Only what a sweep writes: hand-written docs (docs/*.md) never ride along in a bot commit.
PUBLISHED = ("results", "badges", "history.csv", "docs/index.html", "docs/servers", "docs/sparklines", "docs/trends")


def commit_published(root: Path, message: str) -> str | None:
    """Stage the published paths under ``root`` and commit them; returns the new commit's hexsha,
    or ``None`` when nothing changed (no commit is made then)."""
    repo = git.Repo(root)
    _clear_stale_lock(repo)
    paths = [p for p in PUBLISHED if (Path(root) / p).exists()]
    repo.git.add("--all", "--", *paths)
    if repo.head.is_valid() and not repo.index.diff("HEAD"):
        return None
    commit = repo.index.commit(message, author=BOT, committer=BOT)
    return commit.hexsha


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
