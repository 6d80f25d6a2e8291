"""The fresh working directory a server is launched in.

A server never sees the harness's own checkout: it starts in an empty temp directory, which is a
throwaway git repository with one commit when the entry says ``needsGit`` (e.g. mcp-server-git
refuses to start outside a repository).
"""

from __future__ import annotations

from pathlib import Path

import git

from harness.probe.process import SpawnError


def prepare_workdir(path: Path, needs_git: bool) -> None:
    """Populate ``path`` (an empty directory). Raises ``SpawnError`` if git cannot set it up."""
    if not needs_git:
        return
    try:
        repo = git.Repo.init(path)
        (path / "README.md").write_text("throwaway repository for a measurement\n")
        repo.index.add(["README.md"])
        actor = git.Actor("mcp-context-cost", "mcp-context-cost@users.noreply.github.com")
        repo.index.commit("initial commit", author=actor, committer=actor)
    except (git.GitError, OSError) as exc:
        raise SpawnError(f"cannot prepare a git working directory: {exc}") from None
