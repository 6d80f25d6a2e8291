"""The pull-request loop end to end: entrypoint.py run as the runner runs it, in a real git
repository whose base and head commits serve different tools, with GITHUB_EVENT_PATH,
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and a local fake of the GitHub comments API.

The comment is created, then updated in place, then an older one is collapsed; a pull request
from a fork holds no token and calls nothing, and its comment is posted by the workflow_run side
from the artifact — validated and re-derived first, refused when tampered with or aimed at another
pull request; a hostile tool name or description stays inert text in the comment."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from harness.action.ghapi import MARKER
from tests.action.fake_github import BOT, PERSON, FakeGitHub, pull_request, serve
from tests.conftest import FIXTURE_SERVERS

REPO_NAME = "octo/example-server"
TOKEN = "ghs_" + "fAkEtOkEn" * 4
HOSTILE = [
    "<!-- mcp-context-cost -->",
    "@octocat please look",
    "<img src=x onerror=alert(1)>",
    "[click me](https://evil.example/x) ![pixel](https://evil.example/p.png)",
    "**bold** `code` | table | break\n\n# heading",
    "<details open><summary>hi</summary>--></details>",
]
SEARCH = {"name": "search", "description": "Find things.", "inputSchema": {"type": "object"}}
SEARCH_GROWN = SEARCH | {"description": "Find things in the knowledge graph by name, type or observation text.",
                         "outputSchema": {"type": "object", "properties": {"hits": {"type": "array"}}}}
HOSTILE_TOOLS = [{"name": text, "description": f"{text} @octocat <!-- mcp-context-cost --> {text}",
                  "inputSchema": {"type": "object"}} for text in HOSTILE]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def commit(workspace: Path, files: dict[str, str]) -> str:
    for name, content in files.items():
        (workspace / name).write_text(content)
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "change")
    return _git(workspace, "rev-parse", "HEAD")


def serve_script() -> str:
    """A server that lists the tools in tools.json beside it (the fixture tool_list.py)."""
    return ("#!/bin/bash\nexec " + sys.executable + " " + str(FIXTURE_SERVERS / "tool_list.py") +
            ' --tools-json "$(cat "$(dirname "$0")/tools.json")"\n')


@pytest.fixture
def github_api():
    fake = FakeGitHub(repo=REPO_NAME)
    server = serve(fake)
    yield fake
    server.shutdown()


@pytest.fixture
def repo(tmp_path, run_action):
    """The run_action workspace as a git repository: a base commit and a head commit (the head's
    tools: search grown, hostile tools added)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)  # run_action's
    _git(workspace, "init", "-q", "-b", "main")
    (workspace / ".gitignore").write_text(".mcp-context-cost/\n.build-env\n")
    base = commit(workspace, {"serve.sh": serve_script(), "tools.json": json.dumps([SEARCH])})
    head = commit(workspace, {"tools.json": json.dumps([SEARCH_GROWN, *HOSTILE_TOOLS])})
    return workspace, base, head


def event_env(tmp_path: Path, fake: FakeGitHub, name: str, payload: dict) -> dict[str, str]:
    path = tmp_path / f"event-{name}.json"
    path.write_text(json.dumps(payload))
    return {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(path), "GITHUB_API_URL": fake.url,
            "GITHUB_REPOSITORY": REPO_NAME, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


def inputs_for(workspace: Path, **more: str) -> dict[str, str]:
    return {"command": f"bash {workspace}/serve.sh", "name": "example", "timeout": "30"} | more


def assert_inert(body: str) -> None:
    """Only our marker is an HTML comment; no HTML, link, image, mention or heading of the server's."""
    assert body.startswith(MARKER + "\n") and body.count(MARKER) == 1
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    html = [t for t in tokens if t.type == "html_block"] + \
        [c for t in tokens for c in (t.children or []) if c.type == "html_inline"]
    assert [t.content.strip() for t in html] == [MARKER, "<sub>", "</sub>"], html  # ours: the marker, the footer
    inline = [c for t in tokens for c in (t.children or [])]
    links = [c.attrGet("href") or c.attrGet("src") for c in inline if c.type in ("link_open", "image")]
    assert all(link.startswith("https://img.shields.io/badge/") for link in links), links
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert all(not h.startswith(("heading", "hi")) for h in headings), headings
    # and nothing GitHub links after rendering: a mention, an issue reference, a bare URL
    assert "@octocat" not in body and not re.search(r"#\d", body)
    assert not re.search(r"https?://(?!img\.shields\.io/badge/)", body)


@pytest.mark.slow
def test_same_repository_pull_request_comment_created_updated_then_older_collapsed(run_action, repo, github_api,
                                                                                  tmp_path):
    workspace, base, head = repo
    github_api.add_comment(7, MARKER + "\nA person quoting the marker", user=PERSON)
    env = event_env(tmp_path, github_api, "pull_request", {"pull_request": pull_request(7, base, head, REPO_NAME)})
    first = run_action(inputs_for(workspace, comment="true", build="env >> \"$PWD/.build-env\"",
                                  **{"github-token": TOKEN}), env=env | {"GITHUB_TOKEN": TOKEN})
    assert first.code == 0, first.stdout + first.stderr
    builds = (workspace / ".build-env").read_text()
    assert builds.count("GITHUB_REPOSITORY=") == 1 and TOKEN not in builds  # the head's build; the token never
    assert TOKEN not in first.stdout + first.stderr + first.summary + "".join(first.outputs.values())
    assert first.outputs["base-total"] and first.outputs["head-total"] == first.outputs["tokens"]
    assert int(first.outputs["delta"]) == int(first.outputs["head-total"]) - int(first.outputs["base-total"]) > 0
    ours = [c for c in github_api.on(7) if c["user"] == BOT]
    assert len(ours) == 1 and "Pull-request comment created." in first.summary
    body = ours[0]["body"]
    assert_inert(body)
    assert re.search(r"\| search \| grown \| \d+ \| \d+ \| \+\d+ \| "
                     r"description \(\+\d+\), outputSchema \(new, \d+\) \|", body), body
    assert body.count("| added |") == len(HOSTILE)
    assert f"**{first.outputs['delta'].lstrip('+')} tokens heavier**" in body.replace(",", "")
    assert "Tool shape of the changed tools" in body and "https://img.shields.io/badge/context" in body
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in github_api.requests)

    head2 = commit(workspace, {"tools.json": json.dumps([SEARCH_GROWN])})
    env = event_env(tmp_path, github_api, "pull_request", {"pull_request": pull_request(7, base, head2, REPO_NAME)})
    second = run_action(inputs_for(workspace, comment="true", **{"github-token": TOKEN}), env=env)
    assert second.code == 0, second.stdout
    ours = [c for c in github_api.on(7) if c["user"] == BOT]
    assert len(ours) == 1 and ours[0]["body"] != body and "| added |" not in ours[0]["body"]
    assert "Pull-request comment updated." in second.summary and not github_api.minimized

    github_api.add_comment(7, MARKER + "\nan older run's comment, posted concurrently")
    third = run_action(inputs_for(workspace, comment="true", **{"github-token": TOKEN}), env=env)
    assert third.code == 0 and "1 older one(s) collapsed" in third.summary
    newest = github_api.on(7)[-1]
    assert github_api.minimized == {ours[0]["node_id"]} and newest["body"].startswith(MARKER + "\n### Context")
    assert github_api.on(7)[0]["body"] == MARKER + "\nA person quoting the marker"  # never touched


@pytest.mark.slow
def test_a_change_that_changes_nothing_says_so_in_one_line(run_action, repo, github_api, tmp_path):
    workspace, base, _ = repo
    same = commit(workspace, {"README.md": "docs only\n"})
    _git(workspace, "reset", "-q", "--hard", same)
    env = event_env(tmp_path, github_api, "pull_request",
                    {"pull_request": pull_request(8, _git(workspace, "rev-parse", "HEAD~1"), same, REPO_NAME)})
    run = run_action(inputs_for(workspace, comment="true", **{"github-token": TOKEN}), env=env)
    assert run.code == 0 and run.outputs["delta"] == "0"
    [posted] = github_api.on(8)
    lines = [line for line in posted["body"].splitlines() if line and not line.startswith(("<", "!", "#"))]
    assert len(lines) == 1 and lines[0].startswith("No change in context cost:"), posted["body"]


@pytest.mark.slow
def test_fail_on_increase_in_tokens_and_percent(run_action, repo, github_api, tmp_path):
    workspace, base, head = repo
    env = event_env(tmp_path, github_api, "pull_request", {"pull_request": pull_request(9, base, head, REPO_NAME)})
    for limit, code in (("5%", 1), ("100000", 0), ("10", 1)):
        run = run_action(inputs_for(workspace, **{"fail-on-increase": limit}), env=env)
        assert run.code == code, (limit, run.stdout)
        assert ("increase above fail-on-increase" in run.stdout) == bool(code)
    assert github_api.requests == []  # comment: false by default


@pytest.mark.slow
def test_fork_pull_request_holds_no_token_and_the_workflow_run_side_posts(run_action, repo, github_api, tmp_path):
    workspace, base, head = repo
    fork = pull_request(11, base, head, REPO_NAME, head_repo="stranger/example-server")
    env = event_env(tmp_path, github_api, "pull_request", {"pull_request": fork})
    measured = run_action(inputs_for(workspace, comment="true"), env=env)  # no github-token: a fork's run
    assert measured.code == 0, measured.stdout
    assert github_api.requests == [] and "posted by the workflow_run workflow" in measured.summary
    artifact = workspace / ".mcp-context-cost" / "comment"
    assert sorted(p.name for p in artifact.iterdir()) == ["base.measurement.json", "head.measurement.json",
                                                         "pull-request.json"]
    github_api.pulls[11] = fork
    post_env = event_env(tmp_path, github_api, "workflow_run",
                         {"workflow_run": {"head_sha": head, "event": "pull_request",
                                           "head_repository": {"full_name": "stranger/example-server"}}})
    posted = run_action({"comment-from": ".mcp-context-cost/comment", "github-token": TOKEN}, env=post_env)
    assert posted.code == 0, posted.stdout
    [comment] = github_api.on(11)
    assert_inert(comment["body"])
    assert posted.outputs["delta"] == measured.outputs["delta"]
    assert "| search | grown |" in comment["body"]


def _artifact(run_action, repo, github_api, tmp_path) -> tuple[Path, dict, str]:
    workspace, base, head = repo
    fork = pull_request(12, base, head, REPO_NAME, head_repo="stranger/example-server")
    run = run_action(inputs_for(workspace), env=event_env(tmp_path, github_api, "pull_request", {"pull_request": fork}))
    assert run.code == 0
    github_api.pulls[12] = fork
    return workspace / ".mcp-context-cost" / "comment", fork, head


@pytest.mark.slow
@pytest.mark.parametrize("tamper, words", [
    (lambda d: _edit(d / "head.measurement.json", "totalTokens", 987654), "do not re-derive"),
    (lambda d: _edit(d / "base.measurement.json", "canonicalSha256", "0" * 64), "do not re-derive"),
    (lambda d: _edit(d / "head.measurement.json", "status", "pwned"), "not a valid measurement record"),
    (lambda d: _edit(d / "pull-request.json", "number", 13), "head has moved on"),
    (lambda d: _edit(d / "pull-request.json", "repository", "victim/other"), "another repository"),
    # aimed at another pull request whose head it names correctly: not the commit this run measured
    (lambda d: _edit(d / "pull-request.json", "number", 13) or _edit(d / "pull-request.json", "headSha", "f" * 40),
     "workflow_run.head_sha"),
    (lambda d: _edit(d / "pull-request.json", "number", "12; rm -rf /"), "not a pull request"),
    (lambda d: (d / "head.measurement.json").unlink() or (d / "head.measurement.json").symlink_to("/dev/zero"),
     "symbolic link"),
])
def test_the_workflow_run_side_refuses_a_tampered_artifact(run_action, repo, github_api, tmp_path, tamper, words):
    folder, fork, head = _artifact(run_action, repo, github_api, tmp_path)
    github_api.pulls[13] = pull_request(13, fork["base"]["sha"], "f" * 40, REPO_NAME)
    tamper(folder)
    github_api.requests.clear()
    env = event_env(tmp_path, github_api, "workflow_run",
                    {"workflow_run": {"head_sha": head, "head_repository": {"full_name": "stranger/example-server"}}})
    run = run_action({"comment-from": ".mcp-context-cost/comment", "github-token": TOKEN}, env=env)
    assert run.code == 1 and any(words in e for e in run.errors()), run.stdout
    assert [m for m, _, _ in github_api.requests if m != "GET"] == []  # not a word written
    assert github_api.comments == []


def _edit(path: Path, key: str, value: object) -> None:
    document = json.loads(path.read_text())
    document[key] = value
    path.write_text(json.dumps(document))


EVERYTHING = "@modelcontextprotocol/server-everything"
BASE_VERSION, HEAD_VERSION = "2025.7.29", "2026.8.18"  # 11 tools, then 13: renamed, added, removed, grown


@pytest.mark.slow
def test_real_npm_server_in_two_versions_built_in_a_worktree(run_action, tmp_path, github_api):
    """The base commit pins one release of the reference server, the head another; ``build``
    writes the version the launcher reads, so the base's number can only come from a build in
    the base's own worktree."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    _git(workspace, "init", "-q", "-b", "main")
    (workspace / ".gitignore").write_text(".mcp-context-cost/\n.built\n")
    launcher = f'#!/bin/bash\nexec npx -y "{EVERYTHING}@$(cat "$(dirname "$0")/.built")"\n'
    base = commit(workspace, {"serve.sh": launcher, "version.txt": BASE_VERSION})
    head = commit(workspace, {"version.txt": HEAD_VERSION})
    env = event_env(tmp_path, github_api, "pull_request", {"pull_request": pull_request(21, base, head, REPO_NAME)})
    run = run_action(inputs_for(workspace, build="cp version.txt .built", timeout="120", comment="true",
                                **{"github-token": TOKEN, "fail-on-increase": "50%"}), env=env, timeout=900)
    assert run.outputs["base-total"] == "908" and run.outputs["head-total"] == "1708", run.stdout
    assert run.outputs["delta"] == "800" and run.code == 1  # +88.1% is over 50%
    assert "increase above fail-on-increase" in run.stdout
    [posted] = github_api.on(21)
    body = posted["body"]
    assert "| 908 | 1,708 | **+800** (+88.1%) |" in body
    assert re.search(r"\| get\\-sum \| added \| — \| \d+ \| \+\d+ \| description \(new, \d+\), inputSchema", body)
    assert re.search(r"\| structuredContent \| removed \| \d+ \| — \| -\d+ \| .*outputSchema \(gone", body)
    assert re.search(r"\| echo \| grown \| \d+ \| \d+ \| \+\d+ \| .*annotations \(new, \d+\)", body)
    base_record = json.loads((workspace / ".mcp-context-cost/base/results/example/measurement.json").read_text())
    assert "mcp-context-cost-base-" in base_record["launchCommand"]  # launched from the base's worktree
    assert len(_git(workspace, "worktree", "list").splitlines()) == 1  # and the worktree is gone again
