"""The repository's git side: one bot commit per publish holding exactly the paths it wrote
(``dirty_published``, ``commit_paths``, ``sweep_temp_files``), and files as committed at HEAD
(``head_record``: the harness-fault guard compares with these, never the working tree;
docs/OPERATIONS.md, 'Setting up and sweeping').
"""

from __future__ import annotations

import re
from pathlib import Path

import git

from harness.core.jsparse import WireJSONError, parse
from harness.db.confine import Unsafe, in_scope
from harness.util import published
from harness.util.untrusted import escape

BOT = git.Actor("mcp-context-cost-bot", "mcp-context-cost-bot@users.noreply.github.com")
# Only what a publish writes: hand-written docs (docs/*.md) never ride along in a bot commit.
PUBLISHED = published.PUBLISHED
# Not published, but what the pages are drawn from besides the published files (harness.pages.regen).
INPUTS = (published.CATALOG,)
TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
# Where the atomic writer's temporaries can appear: the published folders, and beside the
# published files of the root and of docs/.
_TEMP_TREES = (published.RESULTS, published.BADGES, published.SERVER_DIR, published.SPARK_DIR, published.TREND_DIR)
_TEMP_FLAT = (".", "docs")


class NotARepository(ValueError):
    ...


def require_repo(root: Path) -> git.Repo:
    """The repository at ``root``; NotARepository."""
    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise NotARepository(f"{root} is not a git repository: --commit needs one") from None


def dirty_published(root: Path) -> list[str]:
    """Paths under ``PUBLISHED`` that differ from HEAD (untracked too), temporaries excepted."""
    return sorted(p for p in changed_paths(require_repo(root), PUBLISHED) if not TEMP_NAME.match(Path(p).name))


def dirty_inputs(root: Path) -> list[str]:
    """``INPUTS`` when it differs from HEAD: pages drawn from an uncommitted catalog."""
    return sorted(changed_paths(require_repo(root), INPUTS))


def changed_paths(repo: git.Repo, pathspecs) -> set[str]:
    """Paths matching ``pathspecs`` that ``git status`` reports."""
    out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", *pathspecs)
    return {entry[3:] for entry in out.split("\0") if len(entry) > 3}


def commit_paths(root: Path, message: str, paths: list[str]) -> str | None:
    """Commit exactly ``paths`` as the bot; the new sha, or None when none changed. ``confine.Unsafe``
    for a path outside ``PUBLISHED``.
    """
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
    """Commit every pending change under ``PUBLISHED`` (outside a sweep)."""
    return commit_paths(root, message, dirty_published(root))


def sweep_temp_files(root: Path) -> list[str]:
    """Delete the atomic writer's temporaries a killed run left; call only under the lock."""
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
    """Remove the index, ref and reflog locks a killed ``git add``/``commit`` left (we hold the
    publish lock).
    """
    git_dir = Path(repo.git_dir)
    locks = [git_dir / "index.lock", git_dir / "logs" / "HEAD.lock"]
    if not repo.head.is_detached:
        branch = repo.head.reference.path  # e.g. refs/heads/main
        locks += [git_dir / f"{branch}.lock", git_dir / "logs" / f"{branch}.lock"]
    for lock in locks:
        if lock.exists():
            lock.unlink()


def repo_at(root: Path) -> git.Repo | None:
    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


def head_text(repo: git.Repo | None, relative: str) -> str | None:
    """Text of ``relative`` at HEAD, or None."""
    if repo is None or not repo.head.is_valid():
        return None
    try:
        blob = repo.head.commit.tree / relative
    except KeyError:
        return None
    return blob.data_stream.read().decode("utf-8", errors="replace")


def head_record(repo: git.Repo | None, server: str) -> dict | None:
    """The committed record of ``server``, or None."""
    text = head_text(repo, published.record(server))
    if text is None:
        return None
    try:
        value = parse(text)
    except WireJSONError:
        return None
    return value if isinstance(value, dict) else None
