"""The pull-request loop: measure the base beside the head, leave the comment artifact, keep the comment current,
or post another run's artifact (``workflow_run``). Rule: docs/ACTION.md, "The two workflow files".
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from harness.action import base_worktree, comment, event, ghapi, github, paths
from harness.action.inputs import OUTPUT_DIR, Inputs
from harness.action.summary import text
from harness.core.record import Record
from harness.util import published

COMMENT_DIR = f"{OUTPUT_DIR}/comment"
BASE_DIR = f"{OUTPUT_DIR}/base"


@dataclass
class BaseSide:
    """The comparison's base: its record and path when measured, else the ``problem``."""

    label: str
    record: Record | None = None
    path: Path | None = None
    problem: str | None = None


def base_commit(inputs: Inputs, pull: event.PullRequest | None) -> str | None:
    """The commit to compare with, or ``None`` (``base: none``, a ``url``, or ``auto`` with a committed baseline)."""
    if inputs.url or inputs.base == "none":
        return None
    if inputs.base != "auto":
        return inputs.base
    return None if pull is None or inputs.baseline is not None else pull.base_sha


def measure_base(inputs: Inputs, environ: MutableMapping[str, str], commit: str, measure, out: TextIO) -> BaseSide:
    """Check ``commit`` out in a worktree, build it and measure it with the head's ``measure``."""
    side = BaseSide(label=f"base {commit[:7]}")
    try:
        root = base_worktree.repository_root(inputs.working_directory)
        with base_worktree.worktree(root, commit) as tree:
            workdir = base_worktree.relocate(inputs.working_directory, root, tree)
            if inputs.build:
                github.print_untrusted(out, base_worktree.build(inputs.build, workdir, environ))
            command = base_worktree.repoint(inputs.command, root, tree) if inputs.command else None
            side.record, side.path = measure(command, workdir, inputs.working_directory / BASE_DIR / published.RESULTS)
    except base_worktree.BaseError as exc:
        side.problem = str(exc)
    return side


def leave_artifact(inputs: Inputs, pull: event.PullRequest, head_path: Path, side: BaseSide | None) -> Path:
    """The comment artifact for the ``workflow_run`` workflow, in ``.mcp-context-cost/comment``."""
    base_path = side.path if side is not None and side.record is not None else None
    folder = paths.unmoved(inputs.workspace, inputs.working_directory / COMMENT_DIR / comment.PULL, "comment artifact")
    return comment.write_artifact(folder.parent, pull, head_path, base_path)


def post_here(inputs: Inputs, environ: MutableMapping[str, str], out: TextIO, pull: event.PullRequest,
              body: str) -> str:
    """Post ``body`` on ``pull`` when this run may; one Markdown line saying what happened."""
    if pull.from_fork:
        github.annotate(out, "notice", "comment left to the workflow_run workflow",
                        "a pull request from a fork: this run holds no write token; the comment artifact is in "
                        f"{COMMENT_DIR}")
        return f"The comment is posted by the workflow_run workflow from the artifact in `{COMMENT_DIR}`."
    if not inputs.github_token:
        github.annotate(out, "warning", "comment not posted", "comment: true needs a github-token")
        return "The comment was not posted: no github-token."
    return _post(ghapi.GitHub(inputs.github_token, environ), pull.repository, pull.number, body, out)


def _post(client: ghapi.GitHub, repo: str, number: int, body: str, out: TextIO) -> str:
    try:
        done = ghapi.keep_current(client, repo, number, body)
    except ghapi.ApiError as exc:
        github.annotate(out, "warning", "comment not posted", str(exc))
        return f"The comment could not be posted: {exc}"
    collapsed = f"; {done.minimized} older one(s) collapsed" if done.minimized else ""
    if done.not_minimized:
        collapsed += f"; {done.not_minimized} older one(s) could not be collapsed"
        github.annotate(out, "warning", "older comments not collapsed", f"{done.not_minimized} could not be minimized")
    return f"Pull-request comment {done.action}{collapsed}."


def post_from_artifact(inputs: Inputs, folder: Path, environ: MutableMapping[str, str], out: TextIO,
                       outputs: dict[str, str]) -> tuple[int, str]:
    """The ``workflow_run`` side: validate, re-derive, check, render, post; returns the exit code and summary."""
    try:
        artifact = comment.load_artifact(folder)
        run = event.load(environ).get("workflow_run")
        head_sha = run.get("head_sha") if isinstance(run, dict) else None
        head_repository = run.get("head_repository") if isinstance(run, dict) else None
        head_repository = head_repository.get("full_name") if isinstance(head_repository, dict) else None
        repo = environ.get("GITHUB_REPOSITORY", "")
    except (comment.ArtifactError, event.EventError) as exc:
        github.annotate(out, "error", "comment artifact refused", str(exc))
        return 1, f"## Context cost comment\n\nThe artifact was refused, nothing was posted: {_md(exc)}\n"
    pull = artifact.pull
    refusal = None
    if pull["repository"] != repo:
        refusal = "the artifact names a pull request of another repository"
    elif not isinstance(head_sha, str) or pull["headSha"] != head_sha:  # ties the artifact to its own run
        refusal = "the artifact's head commit is not the commit the measuring run (workflow_run.head_sha) was for"
    elif not inputs.github_token:
        refusal = "no github-token to post with"
    client = ghapi.GitHub(inputs.github_token, environ) if refusal is None else None
    if client is not None:
        try:
            live = event.pull_request_from(client.pull(repo, pull["number"]))
        except (ghapi.ApiError, event.EventError) as exc:
            refusal = f"the pull request cannot be read: {exc}"
        else:
            if live.head_sha != pull["headSha"]:
                refusal = "the pull request's head has moved on since this measurement (a newer run will comment)"
            elif not isinstance(head_repository, str) or live.head_repository.lower() != head_repository.lower():
                # the same commit pushed to another fork runs there too: only its own pull request counts
                refusal = ("the pull request's head is not in the repository the measuring run ran for "
                           "(workflow_run.head_repository)")
    head, base = artifact.head, artifact.base
    outputs.update({"head-total": _s(head.get("totalTokens")), "base-total": _s(base and base.get("totalTokens")),
                    "tokens": _s(head.get("totalTokens")), "status": head["status"]})
    head_total, base_total = head.get("totalTokens"), base and base.get("totalTokens")
    if head_total is not None and base_total is not None:
        outputs["delta"] = str(head_total - base_total)
    if refusal is not None:
        github.annotate(out, "error", "comment not posted", refusal)
        return 1, f"## Context cost comment\n\nNothing was posted: {_md(refusal)}\n"
    body = comment.render(head, base, f"base {pull['baseSha'][:7]}",
                          base_problem=None if base else "the measuring run had no base measurement")
    assert client is not None  # no refusal: the client was made
    line = _post(client, repo, pull["number"], body, out)
    return 0, f"## Context cost comment\n\n{line}\n\n" + body.replace(ghapi.MARKER, "")


def _s(value) -> str:
    return "" if value is None else str(value)


def _md(value: object) -> str:
    return text(value)
