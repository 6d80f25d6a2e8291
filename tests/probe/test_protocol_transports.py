"""Every transport a real client speaks: the 2024-11-05 HTTP+SSE transport reached by the transport
specification's backwards-compatibility procedure or declared by an entry, and Streamable HTTP
streams resumed with Last-Event-ID. Each published number equals node's JSON.stringify of the
bytes the fixture sends (``protocol_helpers.dump``)."""

from __future__ import annotations

import sys

import pytest

from harness.probe.limits import Limits
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401
from tests.probe.protocol_helpers import PortServer, assert_matches, dump, fixture, sse_server


def legacy(*flags: str) -> PortServer:
    return PortServer([sys.executable, str(fixture("legacy_sse_server")), "--port", "0", *flags])


def sse_url(server: PortServer) -> str:
    return f"http://127.0.0.1:{server.port}/sse"


def measure_url(results, name: str, url: str, timeout: float = 10, **target):
    return measure_and_write(Target(name=name, url=url, timeout_seconds=timeout, **target), results)


# --- the 2024-11-05 HTTP+SSE transport ------------------------------------------------------------

@pytest.mark.parametrize("status", ["405", "404", "400"])
def test_post_refused_then_get_opens_the_legacy_transport(status, results_root):
    expected = dump(fixture("legacy_sse_server"))
    here = legacy("--post-status", status)
    try:
        run = measure_url(results_root, f"legacy-{status}", sse_url(here))
    finally:
        here.stop()
    assert_matches(run.record, expected)
    assert run.record["transport"] == "sse"
    assert run.record["negotiatedProtocolVersion"] == "2024-11-05"
    assert f"POST initialize was answered HTTP {status}; as the transport specification's backwards compatibility " \
           "asks, a GET opened the 2024-11-05 HTTP+SSE transport" in run.notes


def test_an_entry_declaring_sse_is_measured_on_it_without_a_post_first(results_root):
    expected = dump(fixture("legacy_sse_server"), "--tools", "3")
    here = legacy("--tools", "3", "--post-status", "500")  # a POST first would fail: the entry says sse
    try:
        run = measure_url(results_root, "legacy-declared", sse_url(here), transport="sse")
    finally:
        here.stop()
    assert_matches(run.record, expected)
    assert run.record["transport"] == "sse" and expected.tools == 3
    assert "POST initialize was answered" not in run.notes


def test_streamable_http_records_its_transport(results_root):
    expected = dump(fixture("sse_server"))
    here = sse_server()
    try:
        run = measure_url(results_root, "streamable", here.url())
    finally:
        here.stop()
    assert_matches(run.record, expected)
    assert run.record["transport"] == "streamable-http"


@pytest.mark.parametrize("flags,why", [
    (("--no-endpoint",), "the GET stream ended without an endpoint event"),
    (("--get-status", "404"), "GET answered HTTP 404 (text/plain)"),
    (("--endpoint-origin",), "the endpoint event named another origin (http://localhost:"),
    (("--endpoint-data", "http://[::1"), "the endpoint event named 'http://[::1', which is not a URL"),
    (("--endpoint-data", "javascript:alert(1)"), "the endpoint event named 'javascript:alert(1)', which is not a URL"),
    (("--endpoint-data", "https://127.0.0.1/messages"), "the endpoint event named another origin (https://127.0.0.1/"),
])
def test_no_legacy_transport_either_is_unreachable_naming_both(flags, why, results_root):
    here = legacy(*flags)
    try:
        run = measure_url(results_root, "legacy-none", sse_url(here))
    finally:
        here.stop()
    rec = run.record
    assert rec["status"] == "unreachable", run.notes
    assert "HTTP 405 from" in run.notes and "a GET for the 2024-11-05 HTTP+SSE transport found none: " + why in run.notes
    assert rec["phase"] == "initialize" and len(rec["attempts"]) == 1
    assert rec.get("transport") == "streamable-http"


@pytest.mark.parametrize("flags,limits,why", [
    (("--noise-first", "10001"), Limits(), "more than 10000 non-JSON-RPC bodies or events"),
    (("--endpoint-data", "/messages?" + "a" * 5000), Limits(max_message_bytes=4096),
     "a Server-Sent Event exceeded 4096 bytes"),
])
def test_a_legacy_stream_stopped_by_a_bound_names_the_bound(flags, limits, why, results_root):
    here = legacy(*flags)
    try:
        run = measure_and_write(Target(name="legacy-bound", url=sse_url(here), timeout_seconds=10), results_root,
                                limits=limits)
    finally:
        here.stop()
    assert run.record["status"] == "unreachable", run.notes
    assert "the GET stream was stopped before any endpoint event: " + why in run.notes


# --- resumability ---------------------------------------------------------------------------------

@pytest.mark.parametrize("flags,reconnections", [
    (("--resume", "1"), 1),                       # tools/list's stream closes after its primer once
    (("--resume", "2", "--retry", "50"), 2),      # twice, honouring a short retry
    (("--resume", "1", "--resume-all"), 1),      # every request's stream, initialize's too
    (("--resume", "1", "--tools", "4"), 1),
])
@pytest.mark.slow
def test_a_stream_closed_after_an_event_id_is_resumed(flags, reconnections, results_root):
    expected = dump(fixture("sse_server"), *[f for f in flags if f in ("--tools", "4")])
    here = sse_server(*flags)
    try:
        run = measure_url(results_root, "resumed", here.url())
    finally:
        here.stop()
    assert_matches(run.record, expected)
    assert (f"the reply to tools/list arrived on a resumed stream (GET with Last-Event-ID, {reconnections} "
            "reconnection(s))") in run.notes


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--no-event-id", "--odd-event-id"])
def test_a_stream_that_cannot_be_resumed_is_an_answer_without_a_reply(flag, results_root):
    here = sse_server("--resume", "1", flag)
    try:
        run = measure_url(results_root, "not-resumed", here.url())
    finally:
        here.stop()
    rec = run.record
    # initialize was answered: the endpoint works, so this is a reply that never came, not "unreachable"
    assert rec["status"] == "malformed-reply", run.notes
    assert rec["phase"] == "tools/list page 1"
    assert "the endpoint answered without a JSON-RPC reply to the request: HTTP 200 (text/event-stream), no " \
           "JSON-RPC reply in it" in run.notes
    assert [a["status"] for a in rec["attempts"]].count("malformed-reply") == 1


@pytest.mark.parametrize("flags,why", [
    (("--resume", "9", "--retry", "0"), "after 5 resumptions with Last-Event-ID, the most this client makes"),
    (("--resume", "1000", "--retry", "-5"), "after 5 resumptions with Last-Event-ID, the most this client makes"),
])
def test_resumption_is_bounded_and_says_so(flags, why, results_root):
    here = sse_server(*flags)
    try:
        run = measure_url(results_root, "resumed-forever", here.url(), timeout=30)
    finally:
        here.stop()
    rec = run.record
    assert rec["status"] == "malformed-reply" and rec["phase"] == "tools/list page 1", run.notes
    assert "HTTP 200 (text/event-stream), no JSON-RPC reply in it " + why in run.notes


@pytest.mark.parametrize("declared,status", [("sse", "measured"), ("http", "unreachable")])
def test_an_audited_entry_is_measured_on_the_transport_its_config_declares(declared, status, results_root):
    from harness.audit.measuring import target_for
    from harness.audit.model import Entry

    expected = dump(fixture("legacy_sse_server"))
    here = legacy("--post-status", "500")  # a POST is refused with 500: no fallback, only the declared transport works
    try:
        entry = Entry(name="db", client="claude-code", source=".mcp.json", scope="user", transport=declared,
                      url=sse_url(here), launch_url=sse_url(here))
        run = measure_and_write(target_for("db", entry, 10), results_root)
    finally:
        here.stop()
    assert run.record["status"] == status, run.notes
    if status == "measured":
        assert_matches(run.record, expected)
        assert run.record["transport"] == "sse"
    else:
        assert "HTTP 500 from" in run.notes


@pytest.mark.slow
def test_audit_measures_a_config_entry_declaring_sse_end_to_end(tmp_path):
    import json
    import subprocess

    expected = dump(fixture("legacy_sse_server"))
    here = legacy("--post-status", "500")
    try:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"db": {"type": "sse", "url": sse_url(here)}}}))
        done = subprocess.run([sys.executable, "-m", "harness.cli", "audit", "--config", str(config), "--no-discover",
                               "--single", "--timeout", "20", "--json"], capture_output=True, text=True, timeout=120)
    finally:
        here.stop()
    assert done.returncode == 0, done.stderr
    assert '"status": "measured"' in done.stdout and f'"tokens": {expected.tokens}' in done.stdout, done.stdout[:2000]
