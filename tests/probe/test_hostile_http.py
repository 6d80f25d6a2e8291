"""Secrets and unbounded input against the HTTP stack itself: what a Streamable HTTP endpoint can do
with redirects and content encodings (tests/fixtures/servers/hostile_http.py).

* A redirect to another origin must not carry the values of the declared headers there — the
  HTTP library strips only ``Authorization``; an ``X-Api-Key`` went along. A redirect on the same
  origin keeps them (the SDKs follow redirects, and so does the harness).
* A redirect's own body is never read: the library read it whole into memory (1.5 GB of it took
  3.3 GB of RAM), outside every bound.
* A server's ``Mcp-Session-Id`` and ``protocolVersion`` are sent back as request headers: one
  that is not visible ASCII (``café``, UTF-8 bytes) raised ``UnicodeEncodeError`` out of the
  measurement — an internal error, not a status — and one holding CR LF read as "no HTTP answer".
* A compressed answer inflates inside one read: 2 KB of ``gzip, gzip`` become 1 GiB of SSE comment
  lines, parsed without ever yielding to the event loop, so neither the deadline nor any size bound
  ended it. What a server sends in one launch is bounded after decoding, and the deadline ends it.
"""

from __future__ import annotations

import hashlib
import sys
import json
import threading
from pathlib import Path

import pytest

from harness.probe.remote import header_env_name
from harness.probe.target import Target
from tests.hostile import SENTINEL
from tests.probe.helpers import measure_and_write, nothing_left, results_root  # noqa: F401
from tests.probe.protocol_helpers import PortServer, fixture

SECRETS = {"X-Api-Key": SENTINEL, "Authorization": f"Bearer {SENTINEL[::-1]}"}


@pytest.fixture(autouse=True)
def header_values(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(header_env_name(name), value)


def server(*flags: str) -> PortServer:
    return PortServer([sys.executable, str(fixture("hostile_http")), "--port", "0", *flags])


def requests(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def measure(results: Path, name: str, url: str, timeout: float = 10, dual: bool = False):
    target = Target(name=name, url=url, headers=tuple(SECRETS), timeout_seconds=timeout)
    return measure_and_write(target, results, dual=dual)


@pytest.mark.parametrize("status", [307, 308, 302])
def test_declared_header_values_never_follow_a_redirect_to_another_origin(status, results_root, tmp_path):
    there_log, here_log = tmp_path / "there.jsonl", tmp_path / "here.jsonl"
    there = server("--log", str(there_log))
    # localhost and 127.0.0.1 are different origins on the same machine.
    here = server("--log", str(here_log), "--redirect", f"http://localhost:{there.port}/mcp",
                  "--redirect-status", str(status))
    try:
        run = measure(results_root, f"redirect-away-{status}", here.url())
    finally:
        here.stop()
        there.stop()
    assert here_log.exists() and there_log.exists(), "the redirect was not followed"
    sent_here = [r["headers"] for r in requests(here_log)]
    assert all(r.get("x-api-key") == sha(SENTINEL) for r in sent_here)  # the declared origin gets them
    received = [r["headers"] for r in requests(there_log)]
    assert received
    for headers in received:
        assert "x-api-key" not in headers and "authorization" not in headers, headers
        assert sha(SENTINEL) not in headers.values()
    if status != 302:  # a 302 turns the POST into a GET, as browsers and the SDKs do: no reply
        assert run.record["status"] == "measured", run.notes


def test_a_redirect_on_the_same_origin_keeps_the_headers(results_root, tmp_path):
    log = tmp_path / "log.jsonl"
    here = server("--log", str(log), "--redirect", "/served")
    try:
        run = measure(results_root, "redirect-same-origin", here.url())
    finally:
        here.stop()
    assert run.record["status"] == "measured", run.notes
    served = [r["headers"] for r in requests(log) if r["path"] == "/served"]
    assert served and all(h.get("x-api-key") == sha(SENTINEL) for h in served)


def test_a_redirect_body_is_never_read(results_root, tmp_path):
    log = tmp_path / "log.jsonl"
    size = 256 << 20
    here = server("--log", str(log), "--redirect", "/served", "--redirect-mb", str(size >> 20))
    try:
        run = measure(results_root, "redirect-body", here.url())
    finally:
        here.stop()
    assert run.record["status"] == "measured", run.notes
    written = [r["redirectBodyBytes"] for r in requests(log) if "redirectBodyBytes" in r]
    assert written, "the fixture logged no redirect body"
    # The client hung up: only what fits in the sockets' buffers was ever written.
    assert max(written) < size // 4, f"the client read {max(written)} bytes of a redirect's body"


def test_a_redirect_loop_is_unreachable_and_names_it(results_root):
    here = server("--redirect", "/mcp")
    try:
        run = measure(results_root, "redirect-loop", here.url(), dual=True)
    finally:
        here.stop()
    assert run.record["status"] == "unreachable", run.notes
    assert "redirect" in run.notes
    assert len(run.measurement.attempts) == 1


@pytest.mark.slow
def test_an_answer_that_inflates_past_the_launch_bound_stops_there(results_root):
    """``gzip, gzip``: 1 GiB of comment lines from a few kilobytes; the launch's bound on what a
    server sends (64 MiB by default) is counted after decoding."""
    here = server("--gzip-sse", "1024", "--layers", "2")
    try:
        run = measure(results_root, "gzip-bound", here.url(), timeout=60)
    finally:
        here.stop()
    rec = run.record
    assert rec["status"] == "startup-failure", run.notes
    assert f"more than {64 << 20} bytes" in run.notes


@pytest.mark.slow
def test_the_deadline_ends_an_answer_that_inflates(results_root, monkeypatch):
    """With the size bound out of the way (8 GiB), the deadline alone must end a body that
    inflates to 4 GiB inside single reads."""
    monkeypatch.setenv("MCP_CONTEXT_COST_MAX_TOTAL_BYTES", str(8 << 30))
    threads = set(threading.enumerate())
    here = server("--gzip-sse", "4096", "--layers", "2")
    try:
        run = measure(results_root, "gzip-deadline", here.url(), timeout=1)
    finally:
        here.stop()
    assert run.record["status"] == "timeout", run.notes
    assert "widest budget tried: 2 s" in run.notes
    assert set(threading.enumerate()) <= threads


@pytest.mark.parametrize("flags,shown", [
    (("--session-id", "636166e9"), "Mcp-Session-Id"),  # Latin-1 "café"
    (("--session-id", "6361666520c3a9"), "Mcp-Session-Id"),  # UTF-8 "cafe é"
    (("--protocol-version", json.dumps("2025-11-25\u00e9")), "MCP-Protocol-Version"),
    (("--protocol-version", json.dumps("2025-11-25\r\nX-Injected: 1")), "MCP-Protocol-Version"),
    (("--protocol-version", json.dumps("2025-11-25\u0000")), "MCP-Protocol-Version"),
])
def test_a_value_the_server_gives_that_cannot_be_a_header_is_a_recorded_failure(flags, shown, results_root):
    here = server(*flags)
    try:
        run = measure(results_root, "bad-header-" + flags[0].strip("-"), here.url())
    finally:
        here.stop()
    rec = run.record
    assert rec["status"] == "malformed-reply", run.notes  # what the server gave is the defect: never retried
    assert f"cannot be sent back as the {shown} header" in run.notes
