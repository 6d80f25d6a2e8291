"""Reply ids, the settle window, event streams, late tools and unbounded bodies over Streamable HTTP against a local server
(tests/fixtures/servers/sse_server.py): SSE lines end only at CR, LF or CRLF; a ping event, comments,
a primer and a related notification are read past; a stream held open or dripping is bounded by the
reply and by the deadline; a late tool list arrives on the GET stream; an endpoint that gives no MCP
answer is unreachable, with the reason, and not retried."""

from __future__ import annotations

import threading

import pytest

from harness.probe.target import Target
from harness.pages.badge import badge_for
from tests.probe.helpers import assert_no_traceback, measure_and_write, nothing_left, results_root, run_cli  # noqa: F401
from tests.probe.protocol_helpers import assert_matches, dump, fixture, sse_server


def measure_url(results, name: str, *flags: str, timeout: float = 10, dual: bool = False, scheme: str = "http"):
    server = sse_server(*flags)
    try:
        return measure_and_write(Target(name=name, url=server.url(scheme), timeout_seconds=timeout), results, dual=dual)
    finally:
        server.stop()


# --- 5. Server-Sent Events ------------------------------------------------------------------------

@pytest.mark.parametrize("separator,ending", [
    ("u2028", "lf"), ("u2029", "crlf"), ("u0085", "cr"), ("all", "lf"), ("all", "crlf"), ("all", "cr"),
])
def test_unicode_separators_stay_inside_the_data_they_belong_to(separator, ending, results_root):
    expected = dump(fixture("sse_server"), "--separator", separator)
    run = measure_url(results_root, f"sse-{separator}-{ending}", "--separator", separator, "--line-ending", ending)
    assert_matches(run.record, expected)
    assert run.record["notes"] == []  # nothing skipped, nothing to say


@pytest.mark.parametrize("flags", [("--ping",), ("--ping", "--comment", "--primer", "--notify", "--line-ending", "crlf")])
def test_ping_events_are_noise_counted_with_their_sample(flags, results_root):
    expected = dump(fixture("sse_server"))
    run = measure_url(results_root, "sse-ping-" + str(len(flags)), *flags)
    assert_matches(run.record, expected)
    capture = run.measurement.capture
    assert capture.noise_lines == 2 and capture.noise_sample == ["ping", "ping"]  # one per answer, in step
    assert "2 non-JSON stdout line(s) skipped, e.g. 'ping'" in run.notes


@pytest.mark.parametrize("flags", [("--comment", "--primer", "--notify"), ("--framing", "json", "--separator", "all"),
                                   ("--string-ids",), ("--batch",), ("--string-ids", "--batch", "--framing", "json")])
def test_answer_shapes_the_sdks_accept(flags, results_root):
    expected = dump(fixture("sse_server"), *[f for f in flags if f in ("--separator", "all", "--batch")])
    run = measure_url(results_root, "sse-shape-" + "-".join(f.strip("-") for f in flags), *flags)
    assert_matches(run.record, expected)
    assert ('echoed request id 1 as "1"' in run.notes) == ("--string-ids" in flags)
    assert run.measurement.capture.noise_lines == 0


def test_a_stream_held_open_after_the_reply_is_measured_and_no_thread_outlives_it(results_root):
    expected = dump(fixture("sse_server"), "--tools", "3")
    threads = set(threading.enumerate())
    run = measure_url(results_root, "sse-hold", "--hold", "600", "--tools", "3", dual=True)
    assert_matches(run.record, expected)
    # each stream stays open 600 s, past every budget: measured at all, the reply ended the read
    assert run.record["status"] == "measured" and len(run.measurement.attempts) == 2
    assert set(threading.enumerate()) <= threads


@pytest.mark.slow
def test_a_reply_that_drips_inside_the_deadline_is_measured(results_root):
    expected = dump(fixture("sse_server"))
    run = measure_url(results_root, "sse-drip-fast", "--drip", "0.005", timeout=30)
    assert_matches(run.record, expected)


@pytest.mark.slow
def test_a_reply_that_drips_past_the_deadline_times_out_on_time(results_root):
    threads = set(threading.enumerate())
    run = measure_url(results_root, "sse-drip-slow", "--drip", "1", timeout=2)
    assert run.record["status"] == "timeout", run.notes
    assert "widest budget tried: 4 s" in run.notes  # cut off: the reply, left to drip, would have arrived
    assert set(threading.enumerate()) <= threads


@pytest.mark.slow
@pytest.mark.parametrize("flags", [("--hold", "600"), ("--drip", "2")])
def test_the_measure_command_exits_promptly(flags, tmp_path):
    # the stream is held 600 s, or the reply drips for minutes: the command ends on its own (run_cli's bound
    # is far below either), with the reply measured or the budget's timeout
    server = sse_server(*flags)
    try:
        done = run_cli("measure", "--url", server.url(), "--name", "cli-" + flags[0].strip("-"), "--timeout", "3",
                       "--results", str(tmp_path / "results"), "--badges", str(tmp_path / "badges"), timeout=150)
    finally:
        server.stop()
    assert_no_traceback(done)
    if flags[0] == "--hold":
        assert done.returncode == 0 and ": measured" in done.stdout, done.stdout + done.stderr
    else:
        assert done.returncode == 3 and ": timeout" in done.stdout, done.stdout + done.stderr


# --- 3. a late tool list over HTTP --------------------------------------------------------------------

def test_list_changed_on_the_get_stream_settles_the_list(results_root):
    expected = dump(fixture("sse_server"), "--tools", "2")
    run = measure_url(results_root, "sse-list-changed", "--list-changed", "--tools", "2")
    assert_matches(run.record, expected)
    assert "sent notifications/tools/list_changed: listed 2 times" in run.notes and "(0 → 2 tools)" in run.notes


# --- 7. unreachable -----------------------------------------------------------------------------------

@pytest.mark.parametrize("flags,scheme,reason", [
    (("--html",), "http", "HTTP 200 (text/html), not JSON or an event stream: '<!doctype html>"),
    (("--status", "404"), "http", "HTTP 404 from http://127.0.0.1:"),
    (("--status", "502"), "http", ": 'no MCP here'"),
    (("--not-jsonrpc",), "http", "HTTP 200 (application/json), no JSON-RPC reply in it"),
    (("--tls",), "https", "TLS with 127.0.0.1:"),
])
def test_an_answer_that_is_not_mcp_is_unreachable_and_not_retried(flags, scheme, reason, results_root):
    run = measure_url(results_root, "unreachable-" + flags[0].strip("-"), *flags, scheme=scheme, dual=True)
    rec = run.record
    assert rec["status"] == "unreachable", run.notes
    assert reason in run.notes
    assert rec["phase"] == "initialize" and rec["totalTokens"] is None
    assert len(run.measurement.attempts) == 1
    assert badge_for(rec["status"], rec["totalTokens"]) == {"schemaVersion": 1, "label": "context cost",
                                                             "message": "unreachable", "color": "lightgrey"}


def test_a_host_that_does_not_resolve_is_unreachable_with_the_dns_reason(results_root, monkeypatch):
    # RFC 6761: .invalid never resolves, on any network; on a machine that resolves other names
    # (localhost stands in for them here) that is the endpoint's doing
    monkeypatch.setenv("MCP_CONTEXT_COST_DNS_CONTROL", "localhost")
    run = measure_and_write(Target(name="unreachable-dns", url="https://mcp.example.invalid/mcp", timeout_seconds=20),
                            results_root)
    assert run.record["status"] == "unreachable", run.notes
    assert "DNS: the host 'mcp.example.invalid' does not resolve" in run.notes
    assert len(run.measurement.attempts) == 1
    assert "environmentEvidence" not in run.record  # the server's own host, not a registry
