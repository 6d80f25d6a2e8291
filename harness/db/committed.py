"""Files as committed at HEAD: the harness-fault guard compares with these, never the working tree."""

from __future__ import annotations

from pathlib import Path

import git

from harness.core.jsparse import WireJSONError, parse
from harness.util import published


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
