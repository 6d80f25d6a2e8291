"""The five shared protocol cases (tests/fixtures/protocol_cases/): each
measures to the value its header states, which node recomputes from the bytes the case sends."""

from __future__ import annotations

import shlex
import socket
import sys

import pytest

from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, nothing_left, results_root  # noqa: F401
from tests.probe.protocol_helpers import PROTOCOL_CASES, PortServer, assert_matches, dump


def case(name: str, *args: str) -> str:
    return shlex.join([sys.executable, str(PROTOCOL_CASES / f"{name}.py"), *args])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_empty_cursor_case_is_two_tools_66_tokens(results_root):
    expected = dump(PROTOCOL_CASES / "empty_cursor.py")
    assert (expected.tools, expected.tokens) == (2, 66)
    run = measure_and_write(Target(name="case-empty-cursor", command=case("empty_cursor"), timeout_seconds=20),
                            results_root)
    assert_matches(run.record, expected)
    assert run.record["status"] == "measured"
    assert 'nextCursor ""' in run.notes


def test_string_id_case_is_37_tokens(results_root):
    expected = dump(PROTOCOL_CASES / "string_id.py")
    assert expected.tokens == 37
    run = measure_and_write(Target(name="case-string-id", command=case("string_id"), timeout_seconds=20), results_root)
    assert_matches(run.record, expected)
    assert 'echoed request id 1 as "1"' in run.notes


@pytest.mark.slow
def test_deferred_tools_case_settles_to_two_tools_109_tokens(results_root):
    expected = dump(PROTOCOL_CASES / "deferred_tools.py")
    assert (expected.tools, expected.tokens) == (2, 109)
    run = measure_and_write(Target(name="case-deferred", command=case("deferred_tools"), timeout_seconds=30),
                            results_root, dual=False)
    assert_matches(run.record, expected)
    assert "sent notifications/tools/list_changed" in run.notes and "(0 → 2 tools)" in run.notes


def test_resources_only_case_is_zero_tools_with_the_capability_note(results_root):
    run = measure_and_write(Target(name="case-resources-only", command=case("resources_only"), timeout_seconds=20),
                            results_root)
    assert run.record["status"] == "measured", run.notes
    assert run.record["toolCount"] == 0 and run.record["rawToolsCapture"] == []
    assert "declares no tools capability" in run.notes and "(capabilities: resources)" in run.notes
    assert all(a.ok for a in run.measurement.attempts)  # never a startup-failure, never retried


@pytest.mark.parametrize("flag,tokens", [("--hold", 40), ("--u2028", 41), ("--ping", 40)])
def test_http_sse_case(flag, tokens, results_root):
    expected = dump(PROTOCOL_CASES / "http_sse.py", *([flag] if flag == "--u2028" else []))
    assert expected.tokens == tokens
    port = free_port()
    server = PortServer([sys.executable, str(PROTOCOL_CASES / "http_sse.py"), str(port), flag], port=port)
    try:
        _wait_listening(port)
        run = measure_and_write(Target(name=f"case-http{flag[1:]}", url=server.url(), timeout_seconds=10),
                                results_root)
    finally:
        server.stop()
    assert_matches(run.record, expected)  # --hold keeps each stream open 300 s, past the budget: the reply ended the read
    if flag == "--ping":
        assert "e.g. 'ping'" in run.notes  # the skipped event is counted with its sample


def _wait_listening(port: int) -> None:
    import time

    ends = time.monotonic() + 20
    while time.monotonic() < ends:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")
