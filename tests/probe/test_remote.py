"""Remote entries: a Streamable HTTP endpoint that answers is measured
directly; one that answers 401 is remote-auth-wall quoting the status and the WWW-Authenticate
header; one where nothing listens is unreachable, and its note gives the reason."""

from __future__ import annotations

import socket

import pytest

from harness.probe.target import Target
from tests.probe.helpers import HttpFixture, measure_and_write, nothing_left, results_root  # noqa: F401

# An unclosed subprocess transport or pipe (a leak the loop reports at garbage collection) fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

WWW_AUTH = 'Bearer resource_metadata="https://example.invalid/.well-known/oauth-protected-resource"'


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    server = HttpFixture("http_server.py", tmp_path_factory.mktemp("http") / "stderr.log")
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def auth_wall(tmp_path_factory):
    server = HttpFixture("http_auth_wall.py", tmp_path_factory.mktemp("wall") / "stderr.log")
    yield server
    assert server.stop() == 0


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_http_server_is_measured_with_its_two_tools(http_server, results_root):
    run = measure_and_write(Target(name="http", url=http_server.url, timeout_seconds=10), results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert [tool["name"] for tool in rec["tools"]] == ["search_issues", "create_issue"]
    assert rec["toolCount"] == 2 and rec["totalTokens"] > 0
    assert rec["launchCommand"] == http_server.url
    assert rec["headerNames"] == []
    assert rec["serverName"] == "http-fixture"
    assert rec["requestedProtocolVersion"] == "2025-11-25"
    assert rec["negotiatedProtocolVersion"]
    assert len(run.measurement.attempts) == 2  # measured, then confirmed by a second connection
    assert rec["attempts"][0]["canonicalSha256"] == rec["attempts"][1]["canonicalSha256"] == rec["canonicalSha256"]


def test_auth_wall_is_remote_auth_wall_quoting_status_and_challenge(auth_wall, results_root):
    run = measure_and_write(Target(name="wall", url=auth_wall.url, timeout_seconds=5), results_root)
    rec = run.record
    assert rec["status"] == "remote-auth-wall", run.notes
    assert rec["totalTokens"] is None
    assert f"HTTP 401 from {auth_wall.url}" in run.notes
    assert f"WWW-Authenticate: {WWW_AUTH}" in run.notes
    assert rec["launchCommand"] == auth_wall.url
    assert len(run.measurement.attempts) == 1  # an auth wall is not a retried status


def test_auth_wall_receives_declared_header_names(auth_wall, monkeypatch, results_root):
    monkeypatch.setenv("MCP_HEADER_X_API_KEY", "not-a-real-key-123")
    target = Target(name="wall-headers", url=auth_wall.url, headers=("X-Api-Key",), timeout_seconds=5)
    run = measure_and_write(target, results_root)
    assert run.record["status"] == "remote-auth-wall", run.notes
    assert run.record["headerNames"] == ["X-Api-Key"]
    logged = auth_wall.log.read_text()
    assert "X-Api-Key" in logged
    assert "not-a-real-key-123" not in run.path.read_text()


def test_nothing_listening_is_unreachable_with_the_reason_and_not_retried(results_root):
    port = closed_port()
    run = measure_and_write(Target(name="closed", url=f"http://127.0.0.1:{port}/mcp", timeout_seconds=3), results_root)
    rec = run.record
    assert rec["status"] == "unreachable", run.notes
    assert rec["totalTokens"] is None
    assert f"connection refused by 127.0.0.1:{port}" in run.notes
    assert rec["phase"] == "initialize"
    assert len(run.measurement.attempts) == 1  # no package cache to warm: not retried
