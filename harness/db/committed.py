"""The committed state: files as they are at ``HEAD``, read through gitpython.

The harness-fault guard compares a sweep against what is committed, not against the working tree
(issue #4), so an uncommitted or half-published tree can never vouch for itself.
"""

from __future__ import annotations

from pathlib import Path

import git

from harness.core.jsparse import WireJSONError, parse


def repo_at(root: Path) -> git.Repo | None:
    """The git repository at ``root``, or ``None`` when ``root`` is not one."""
    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


def head_text(repo: git.Repo | None, relative: str) -> str | None:
    """Text of ``relative`` at HEAD, or ``None`` (no repo, no commit yet, or no such file)."""
    if repo is None or not repo.head.is_valid():
        return None
    try:
        blob = repo.head.commit.tree / relative
    except KeyError:
        return None
    return blob.data_stream.read().decode("utf-8", errors="replace")


def head_record(repo: git.Repo | None, server: str) -> dict | None:
    """The committed ``results/<server>/measurement.json`` parsed, or ``None``."""
    text = head_text(repo, f"results/{server}/measurement.json")
    if text is None:
        return None
    try:
        value = parse(text)
    except WireJSONError:
        return None
    return value if isinstance(value, dict) else None
