"""The pull-request loop attacked: what the build, the server and the base commit can reach, a
GitHub API that answers with anything, and an artifact or a comment that tries to be something
else. Each kind with several variants; each asserts the one safe outcome."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.action import comment, event, ghapi
from harness.action.inputs import InputError, read
from tests.action.fake_github import pull_request
from tests.action.test_pull_request import TOKEN, _artifact, _git, commit, event_env, serve_script
from tests.action.test_pull_request import github_api, repo  # noqa: F401 - fixtures
from tests.conftest import FIXTURE_SERVERS, REPO

RUNNER_SECRETS = {"ACTIONS_RUNTIME_TOKEN": "rt." + "RuNtImE" * 5,
                  "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc." + "IdToKeN" * 5}
DUMP = "for p in /proc/[0-9]*; do tr '\\0' '\\n' < \"$p/environ\" 2>/dev/null || true; done"


# what a launched process can read ---------------------------------------------------------------

@pytest.mark.slow
def test_neither_the_build_nor_the_server_can_read_a_token_from_any_process(run_action, tmp_path):
    """/proc/<pid>/environ keeps the environment a process started with, whatever it deletes
    later: the build and the server each read every process's there (the harness's included)."""
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    server = tmp_path / "server.sh"
    server.write_text(f"#!/bin/bash\n{DUMP} > {dumps}/server\nexec {sys.executable} "
                      f"{FIXTURE_SERVERS / 'tool_list.py'}\n")
    run = run_action({"command": f"bash {server}", "name": "demo", "timeout": "30", "github-token": TOKEN,
                      "build": f"{DUMP} > {dumps}/build"}, env=RUNNER_SECRETS)
    assert run.code == 0, run.stdout + run.stderr
    for name in ("build", "server"):
        seen = (dumps / name).read_text()
        assert "GITHUB_WORKSPACE=" in seen  # the dump did read environments
        for secret in (TOKEN, *RUNNER_SECRETS.values()):
            assert secret not in seen, f"the {name} read {secret[:8]}…"


# what the Action writes, after the build and the server ran -------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("swap", [
    "rm -rf .mcp-context-cost && ln -s {outside} .mcp-context-cost",
    "mkdir -p .mcp-context-cost && ln -s {outside} .mcp-context-cost/results",
    "mkdir -p .mcp-context-cost/results && ln -s {outside} .mcp-context-cost/results/demo",
    "mkdir -p badges && rm -rf badges/deep && ln -s {outside} badges/deep",
])
def test_a_link_made_by_the_build_after_the_check_is_never_written_through(run_action, tmp_path, swap):
    outside = tmp_path / "outside"
    outside.mkdir()
    run = run_action({"command": f"{sys.executable} {FIXTURE_SERVERS / 'tool_list.py'}", "name": "demo",
                      "timeout": "30", "badge-path": "badges/deep/badge.json", "build": swap.format(outside=outside)})
    assert run.code == 1, run.stdout
    assert any("symbolic link made after the inputs were checked" in e for e in run.errors()), run.errors()
    assert list(outside.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("swap", ["rm base.json && ln -s {outside}/record.json base.json",
                                  "mv base.json real.json && mkdir base.json",
                                  "rm base.json && mkfifo base.json"])
def test_a_baseline_swapped_by_the_build_after_the_check_is_not_read(run_action, tmp_path, swap):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(RECORD, outside / "record.json")
    (tmp_path / "workspace" / "base.json").write_text("{}")
    run = run_action({"command": f"{sys.executable} {FIXTURE_SERVERS / 'tool_list.py'}", "name": "demo",
                      "timeout": "30", "baseline": "base.json", "build": swap.format(outside=outside)})
    assert run.code == 1, run.stdout
    assert [e for e in run.errors() if "baseline" in e], run.errors()
    assert "airtable" not in run.summary and run.outputs["base-total"] == ""


# the base commit's tree -------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("where", ["working-directory", "command"])
def test_a_link_in_the_base_commit_never_takes_the_build_or_the_server_out_of_its_worktree(
        run_action, tmp_path, github_api, where):
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "serve.sh").write_text(f"#!/bin/bash\ntouch {outside}/server-ran\n" + serve_script().split("\n", 1)[1])
    (outside / "tools.json").write_text("[]")
    _git(workspace, "init", "-q", "-b", "main")
    (workspace / ".gitignore").write_text(".mcp-context-cost/\n")
    os.symlink(outside, workspace / "sub")
    base = commit(workspace, {})
    (workspace / "sub").unlink()
    (workspace / "sub").mkdir()
    head = commit(workspace, {"sub/serve.sh": serve_script(), "sub/tools.json": "[]"})
    the_pull = pull_request(4, base, head, "octo/example-server")
    env = event_env(tmp_path, github_api, "pull_request", {"pull_request": the_pull})
    inputs = {"command": f"bash {workspace}/sub/serve.sh", "name": "demo", "timeout": "30",
              "build": f"pwd -P > {tmp_path}/build-$RANDOM"}
    if where == "working-directory":
        inputs["working-directory"] = "sub"
    run = run_action(inputs, env=env)
    assert run.code == 0, run.stdout
    assert "resolves outside the base commit's worktree" in run.stdout
    built_in = [p.read_text().strip() for p in tmp_path.glob("build-*")]
    assert built_in and all(Path(d).is_relative_to(workspace) or "mcp-context-cost-base-" in d for d in built_in)
    assert not (outside / "server-ran").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["serve.sh", "tools.json"]


# the artifact the workflow_run side reads ------------------------------------------------------

RECORD = REPO / "results" / "airtable" / "measurement.json"
PULL = {"number": 5, "baseSha": "a" * 40, "headSha": "b" * 40, "repository": "octo/example-server"}


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "artifact"
    folder.mkdir()
    shutil.copy(RECORD, folder / comment.HEAD)
    (folder / comment.PULL).write_text(json.dumps(PULL))
    return folder


@pytest.mark.parametrize("tamper, words", [
    (lambda d, t: ((d / comment.PULL).unlink(), (t / "elsewhere.json").write_text(json.dumps(PULL)),
                   (d / comment.PULL).symlink_to(t / "elsewhere.json")), "symbolic link"),
    (lambda d, t: (d / comment.PULL).write_text("[" * 2000 + "]" * 2000), "cannot be read"),
    (lambda d, t: (d / comment.PULL).write_text('{"number": 5' + "}" * 3000), "cannot be read"),
    (lambda d, t: (d / comment.BASE).symlink_to(d / comment.HEAD), "symbolic link"),
    (lambda d, t: os.mkfifo(d / comment.BASE), "not a regular file"),
    (lambda d, t: (d / comment.PULL).write_text(json.dumps(PULL | {"repository": "../.."})), "not a pull request"),
])
def test_an_artifact_that_is_not_plain_files_is_refused_by_name(tmp_path, tamper, words):
    folder = _folder(tmp_path)
    assert comment.load_artifact(folder).pull == PULL  # untampered: loads
    tamper(folder, tmp_path)
    with pytest.raises(comment.ArtifactError, match=words):
        comment.load_artifact(folder)


@pytest.mark.slow
def test_the_same_commit_pushed_to_another_fork_cannot_comment_on_its_pull_request(run_action, repo, github_api,
                                                                                   tmp_path):
    """Another fork's run of the victim's head commit has the same workflow_run.head_sha."""
    folder, fork, head = _artifact(run_action, repo, github_api, tmp_path)
    for head_repository, code in (("mallory/example-server", 1), (None, 1), ("stranger/example-server", 0)):
        run_event = {"head_sha": head}
        if head_repository:
            run_event["head_repository"] = {"full_name": head_repository}
        env = event_env(tmp_path, github_api, "workflow_run", {"workflow_run": run_event})
        run = run_action({"comment-from": ".mcp-context-cost/comment", "github-token": TOKEN}, env=env)
        assert run.code == code, run.stdout
        assert bool(github_api.on(12)) == (code == 0)
        if code:
            assert any("workflow_run.head_repository" in e for e in run.errors()), run.errors()


# the GitHub API answering with anything ---------------------------------------------------------

def _hostile(reply):
    """A local server answering every request with ``reply(handler)``; returns (url, requests)."""
    seen: list[tuple[str, str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _any(self):
            seen.append((self.command, self.headers.get("Host", ""), self.headers.get("Authorization") or ""))
            status, headers, body = reply(self)
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            if body is not None:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body is not None:
                self.wfile.write(body)

        do_GET = do_POST = do_PATCH = _any

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


def _listing(comments):
    def reply(handler):
        if handler.command == "GET":
            return 200, [], json.dumps(comments).encode()
        if "graphql" in handler.path:
            return 200, [], b'{"errors": [{"message": "nope"}]}'
        return 200, [], b'{"html_url": 5}'
    return reply


def _trickle(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "50")
    handler.end_headers()
    try:
        for _ in range(50):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            threading.Event().wait(0.1)
    except OSError:  # the client gave up: the point
        pass
    return 200, [], None


OURS = {"user": {"type": "Bot"}, "body": ghapi.MARKER + "\nold"}


@pytest.mark.parametrize("reply, outcome", [
    (lambda h: (200, [], b"[" * 5000 + b"]" * 5000), "not JSON"),
    (lambda h: (200, [], b"<html>rate limited</html>"), "not JSON"),
    (lambda h: (500, [], json.dumps({"message": f"bad {h.headers.get('Authorization')}"}).encode()), "HTTP 500"),
    (lambda h: (302, [("Location", f"http://localhost:{h.server.server_port}/x")], b""), "HTTP 302"),
    (lambda h: (307, [("Location", "/elsewhere")], b""), "HTTP 307"),
    (lambda h: (200, [], b"x" * (ghapi.MAX_REPLY_BYTES + 10)), "over"),
    (_listing([OURS | {"id": "x", "node_id": "n", "created_at": "a"}]), ("created", 0, 0)),
    (_listing([OURS | {"id": 1, "created_at": "a"}, OURS | {"id": 2, "node_id": "n2", "created_at": "b"}]),
     ("updated", 0, 0)),
    (_listing([OURS | {"id": 1, "node_id": "n1", "created_at": 7},
               OURS | {"id": 2, "node_id": "n2", "created_at": "b"}]),
     ("updated", 0, 0)),
    (_listing([OURS | {"id": 1, "node_id": "n1", "created_at": "a"},
               OURS | {"id": 2, "node_id": "n2", "created_at": "b"},
               "a string", None, [1]]), ("updated", 0, 1)),
])
def test_a_hostile_api_reply_is_an_api_error_or_a_sane_outcome_and_the_token_stays_home(reply, outcome, monkeypatch):
    server, seen = _hostile(reply)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    client = ghapi.GitHub(TOKEN, {"GITHUB_API_URL": f"http://127.0.0.1:{server.server_port}"})
    try:
        if isinstance(outcome, str):
            with pytest.raises(ghapi.ApiError, match=outcome) as caught:
                ghapi.keep_current(client, "octo/example-server", 5, "body")
            assert TOKEN not in str(caught.value)
        else:
            done = ghapi.keep_current(client, "octo/example-server", 5, "body")
            assert (done.action, done.minimized, done.not_minimized) == outcome and done.url == ""
    finally:
        server.shutdown()
    assert all(host.startswith("127.0.0.1") for _, host, _ in seen)  # no redirect followed to another host


@pytest.mark.slow
def test_a_reply_that_trickles_in_ends_at_the_deadline(monkeypatch):
    server, _ = _hostile(_trickle)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setattr(ghapi, "DEADLINE_SECONDS", 1)
    client = ghapi.GitHub(TOKEN, {"GITHUB_API_URL": f"http://127.0.0.1:{server.server_port}"})
    try:
        with pytest.raises(ghapi.ApiError, match="took over 1 s"):
            client.comments("octo/example-server", 5)
    finally:
        server.shutdown()


@pytest.mark.parametrize("pull", [
    {"number": 5, "base": {"sha": "a" * 40, "repo": {"full_name": "o/r"}}, "head": {"sha": "b" * 40, "repo": ["x"]}},
    {"number": 5, "base": {"sha": "a" * 40, "repo": ["o/r"]}, "head": {"sha": "b" * 40}},
    {"number": 5, "base": "a", "head": {"sha": "b" * 40}},
    {"number": 5, "base": {"sha": "a" * 40, "repo": {"full_name": "../.."}}, "head": {"sha": "b" * 40, "repo": None}},
    {"number": "5", "base": {"sha": "a" * 40, "repo": {"full_name": "o/r"}}, "head": {"sha": "b" * 40, "repo": None}},
])
def test_a_pull_request_of_the_wrong_shape_is_an_event_error(pull):
    try:
        found = event.pull_request_from(pull)
    except event.EventError:
        return
    assert found.head_repository == "(deleted)" and event.is_repository(found.repository)


# the comment and the inputs ---------------------------------------------------------------------

@pytest.mark.parametrize("words", ["see GH-12", "gh-7 and Gh-8", "octo/x GH-1"])
def test_a_gh_number_reference_is_not_linked(words):
    shown = comment.text(words)
    assert "GH\u2060\\-" in shown.replace("gh", "GH").replace("Gh", "GH")
    assert "#" not in shown


@pytest.mark.parametrize("other", ["command", "url", "config", "build"])
def test_comment_from_measures_nothing_and_says_so_beside_a_measuring_input(tmp_path, other):
    (tmp_path / "artifact").mkdir()
    values = {"command": "npx -y x", "url": "https://h/mcp", "config": ".mcp.json", "build": "make"}
    with pytest.raises(InputError) as caught:
        read({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_COMMENT-FROM": "artifact",
              f"INPUT_{other.upper()}": values[other]})
    assert any("'comment-from'" in p and repr(other) in p for p in caught.value.problems), caught.value.problems
