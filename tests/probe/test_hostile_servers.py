"""Every hostile fixture server gets the status the failure taxonomy says, with
the note that explains it (methodology, "Failure taxonomy — no silent drops";
tests/fixtures/servers/README.md). Every record validates and is written; after the module no
child process and no temp file remains (``nothing_left``)."""

from __future__ import annotations

import json

import pytest

from harness.core.canonical import stringify
from harness.core.tokenizer import count
from harness.probe.limits import DEFAULT_LIMITS, Limits
from harness.probe.target import NotApplicable, Target
from tests.conftest import fixture_command
from tests.probe.helpers import measure_and_write, nothing_left, process_alive, results_root, wait_gone  # noqa: F401

# An unclosed subprocess transport or pipe (a leak the loop reports at garbage collection) fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

FAST = 3.0  # first-attempt budget (seconds) for fixtures that answer at once


def target(name: str, fixture: str, *args: str, timeout: float = FAST, **kwargs) -> Target:
    return Target(name=name, command=fixture_command(fixture, *args), timeout_seconds=timeout, **kwargs)


def tool_names(run) -> list:
    return [tool["name"] for tool in run.record["tools"]]


# --- measured despite hostile framing -------------------------------------------------------------

@pytest.mark.parametrize("flags", [(), ("--json-noise",)], ids=["text-noise", "json-noise"])
def test_noise_on_stdout_is_skipped_and_counted(flags, results_root):
    run = measure_and_write(target("noise", "noise_stdout", *flags), results_root)
    assert run.record["status"] == "measured", run.notes
    assert tool_names(run) == ["search_issues", "create_issue"]
    skipped = run.measurement.capture.noise_lines
    assert skipped > 0
    assert f"{skipped} non-JSON stdout line(s) skipped" in run.notes


@pytest.mark.slow
def test_reply_split_across_writes_is_reassembled(results_root):
    run = measure_and_write(target("split", "split_writes"), results_root)
    assert run.record["status"] == "measured", run.notes
    descriptions = [tool["description"] for tool in run.record["rawToolsCapture"]]
    assert "Café-naïve ✓ — résumé 日本語 🚀 search." in descriptions[0]
    assert "Ünïcödé ✓ — 中文 🚀 body." in descriptions[1]
    assert not any("\ufffd" in d for d in descriptions)


def test_stderr_flood_is_drained_and_only_a_bounded_tail_kept(results_root):
    run = measure_and_write(target("flood", "stderr_flood", timeout=10), results_root)
    assert run.record["status"] == "measured", run.notes
    for attempt in run.measurement.attempts:
        assert 0 < len(attempt.stderr_tail.encode("utf-8")) <= DEFAULT_LIMITS.stderr_tail_bytes


def test_ping_answered_and_roots_list_refused(results_root):
    run = measure_and_write(target("ping", "well_behaved", "--ping"), results_root)
    assert run.record["status"] == "measured", run.notes
    capture = run.measurement.capture
    assert capture.server_requests == ["ping", "roots/list"]
    lines = {line.split(":", 1)[0]: line for line in capture.stderr_tail.splitlines() if "reply to" in line}
    ping = json.loads(lines["[fixture] reply to ping"].split(": ", 1)[1])
    roots = json.loads(lines["[fixture] reply to roots/list"].split(": ", 1)[1])
    assert ping == {"jsonrpc": "2.0", "id": "srv-ping", "result": {}}
    assert roots["id"] == "srv-roots" and "error" in roots and "result" not in roots


@pytest.mark.parametrize("flags,declared", [((), True), (("--no-tools-capability",), False)],
                         ids=["capability", "no-capability"])
def test_zero_tools_is_measured_and_says_whether_a_capability_was_declared(flags, declared, results_root):
    run = measure_and_write(target("zero", "well_behaved", "--zero-tools", *flags), results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["rawToolsCapture"] == [] and rec["toolCount"] == 0
    assert rec["totalTokens"] == count("[]")
    assert rec["declaredToolsCapability"] is declared
    said = "it declared a tools capability" if declared else "it did not declare a tools capability"
    assert said in run.notes


# --- size and pagination bounds -------------------------------------------------------------------

@pytest.mark.slow
def test_huge_reply_fails_naming_the_size_limit(results_root):
    run = measure_and_write(target("huge", "huge_reply", timeout=20), results_root)
    assert run.record["status"] == "malformed-reply", run.notes
    # a deterministic defect is not retried (a slow first launch may time out before it)
    assert [a["status"] for a in run.record["attempts"]].count("malformed-reply") == 1
    assert run.record["totalTokens"] is None and run.record["rawToolsCapture"] is None
    assert f"a message exceeded {DEFAULT_LIMITS.max_message_bytes} bytes" in run.notes


@pytest.mark.slow
def test_huge_reply_under_a_raised_limit_is_measured(results_root):
    limits = Limits(max_message_bytes=32 * 1024 * 1024)
    run = measure_and_write(target("huge-raised", "huge_reply", "--mb", "20", timeout=20), results_root, limits=limits)
    assert run.record["status"] == "measured", run.notes
    assert run.record["toolCount"] == 500
    assert tool_names(run)[:2] == ["bulk_000", "bulk_001"]


def test_infinite_pagination_fails_at_the_page_cap(results_root):
    run = measure_and_write(target("infinite", "infinite_pages"), results_root)
    assert run.record["status"] == "startup-failure", run.notes
    assert run.record["rawToolsCapture"] is None
    assert f"more than {DEFAULT_LIMITS.max_pages} tools/list pages" in run.notes


def test_infinite_pagination_honours_a_lower_page_cap(results_root):
    run = measure_and_write(target("infinite-5", "infinite_pages"), results_root, limits=Limits(max_pages=5))
    assert run.record["status"] == "startup-failure"
    assert "more than 5 tools/list pages" in run.notes
    assert run.record["phase"] == "tools/list page 6"


def test_repeated_cursor_with_the_same_page_loses_no_tool_and_is_a_note(results_root):
    run = measure_and_write(target("repeated", "repeated_cursor"), results_root)
    assert run.record["status"] == "measured", run.notes
    assert run.record["toolCount"] == 2 and run.record["phase"] == "done"
    assert "nextCursor 'same-cursor' repeated: page 2 repeated page 1" in run.notes
    assert "no tool was lost" in run.notes


def test_repeated_cursor_with_new_tools_fails_without_looping(results_root):
    run = measure_and_write(target("repeated-new", "repeated_cursor", "--new-tools"), results_root)
    assert run.record["status"] == "startup-failure", run.notes
    assert "nextCursor 'same-cursor' repeated: page 2 carried it again, with other tools than page 1" in run.notes
    assert run.record["phase"] == "tools/list page 2"
    assert all(a.tools is None and a.pages == 2 for a in run.measurement.attempts)  # stopped at once


# --- hangs and exits ------------------------------------------------------------------------------

@pytest.mark.slow
def test_never_answers_times_out_retried_once_at_double_budget(results_root):
    run = measure_and_write(target("never", "never_answers", timeout=2), results_root)
    assert run.record["status"] == "timeout", run.notes
    assert [a.failure.detail for a in run.measurement.attempts] == ["no answer within 2 s", "no answer within 4 s"]
    assert "widest budget tried: 4 s" in run.notes
    assert "retry 1" in run.notes


@pytest.mark.slow
def test_never_answers_ignoring_eof_and_sigterm_is_still_reaped(results_root):
    run = measure_and_write(target("never-stubborn", "never_answers", "--ignore-eof", "--ignore-sigterm", timeout=1),
                            results_root)
    assert run.record["status"] == "timeout", run.notes
    assert "widest budget tried: 2 s" in run.notes
    # SIGKILL reaped it: the module's nothing_left check proves no process survived.


@pytest.mark.slow
def test_slow_start_within_the_widened_budget_is_measured_on_the_retry(results_root):
    run = measure_and_write(target("slow", "slow_start", "--delay", "3", timeout=2), results_root)
    assert run.record["status"] == "measured", run.notes
    first = run.measurement.attempts[0]
    assert first.failure.kind == "timeout" and first.failure.detail == "no answer within 2 s"
    assert "measured on retry 1" in run.notes
    assert run.record["toolCount"] == 2


def test_answers_initialize_then_exits(results_root):
    run = measure_and_write(target("init-exit", "init_then_exit"), results_root)
    assert run.record["status"] == "startup-failure", run.notes
    assert "exit code 0" in run.notes
    # the exit is seen by whichever message meets the closed pipe first: the notification or the list
    assert run.record["phase"] in ("notifications/initialized", "tools/list page 1")
    assert run.record["stderrTail"].strip().endswith("[fixture] shutting down")


def test_crash_mid_line_is_not_parsed_as_a_result(results_root):
    run = measure_and_write(target("crash", "crash_mid_line"), results_root)
    rec = run.record
    assert rec["status"] == "startup-failure", run.notes
    assert rec["rawToolsCapture"] is None and rec["totalTokens"] is None
    assert "exit code 1" in run.notes
    assert rec["stderrTail"].strip().endswith("AttributeError: 'NoneType' object has no attribute 'kind'")


@pytest.mark.parametrize("flags,status", [
    ((), "measured"),
    (("--detach-stdio",), "measured"),
    (("--exit-early",), "startup-failure"),
], ids=["holds-pipes", "detached", "exit-early"])
@pytest.mark.slow
def test_grandchild_that_outlives_the_server_is_killed(flags, status, tmp_path, results_root):
    pidfile = tmp_path / "grandchild.pid"
    run = measure_and_write(target("forks", "forks_grandchild", "--pidfile", str(pidfile), *flags), results_root)
    assert run.record["status"] == status, run.notes
    if status == "startup-failure":  # the exit reported as one, not waited on until the budget ran out
        assert all(a.failure.kind == "exited" for a in run.measurement.attempts)
        assert "exit code 0" in run.notes
    pid = int(pidfile.read_text())
    assert not wait_gone([pid]), f"grandchild {pid} outlived the measurement"
    assert not process_alive(pid)


# --- malformed results and error replies ----------------------------------------------------------

@pytest.mark.parametrize("variant,shape", [
    ("object", "tools/list result.tools is an object, not an array"),
    ("null", "tools/list result.tools is null, not an array"),
    ("missing", "tools/list result.tools is missing"),
])
def test_tools_not_an_array_is_never_measured(variant, shape, results_root):
    run = measure_and_write(target(f"tools-{variant}", "tools_not_array", "--variant", variant), results_root)
    assert run.record["status"] == "malformed-reply", run.notes
    assert run.record["totalTokens"] is None and run.record["toolCount"] is None
    assert shape in run.notes
    assert "zero tools" not in run.notes


def test_tools_array_holding_a_non_object_is_measured_as_it_answered(results_root):
    # The array itself is well-formed; the methodology counts JSON.stringify(tools) whatever the
    # elements are, and the per-tool breakdown names a non-object element "(unnamed)".
    run = measure_and_write(target("tools-string", "tools_not_array", "--variant", "string"), results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["rawToolsCapture"][1] == "search_issues"
    assert tool_names(run) == ["search_issues", "(unnamed)"]
    assert rec["totalTokens"] == count(stringify(rec["rawToolsCapture"]))


def test_jsonrpc_error_on_tools_list_is_quoted(results_root):
    run = measure_and_write(target("err-list", "jsonrpc_error"), results_root)
    assert run.record["status"] == "startup-failure", run.notes
    assert "JSON-RPC error -32603: Internal error: database unavailable" in run.notes
    assert run.record["phase"] == "tools/list page 1"


def test_jsonrpc_error_on_initialize_is_quoted(results_root):
    run = measure_and_write(target("err-init", "jsonrpc_error", "--on", "initialize", "--code", "-32000",
                                   "--message", "boom: config unreadable"), results_root)
    rec = run.record
    assert rec["status"] == "startup-failure", run.notes
    assert "JSON-RPC error -32000: boom: config unreadable" in run.notes
    assert rec["phase"] == "initialize"
    assert "negotiatedProtocolVersion" not in rec


# --- protocol refusals ----------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [(), ("--sdk-data",)], ids=["plain", "sdk-data"])
def test_initialize_unknown_is_protocol_mismatch_with_a_discover_figure(flags, results_root):
    run = measure_and_write(target("init-unknown", "initialize_unknown", *flags), results_root)
    rec = run.record
    assert rec["status"] == "protocol-mismatch", run.notes
    assert rec["totalTokens"] is None
    assert "-32601" in rec["notes"][0]
    assert "data.supported" not in rec["notes"][0]  # no revision claimed: the error named none
    assert len(run.measurement.attempts) == 1  # protocol-mismatch is never retried
    discover = rec["discover"]
    assert discover["protocolVersion"] == "2026-07-28"
    assert discover["supportedVersions"] == ["2026-07-28"]
    assert discover["toolCount"] == 2
    assert discover["totalTokens"] == count(stringify(discover["rawToolsCapture"]))
    assert "server/discover answered" in run.notes


@pytest.mark.parametrize("flags,supported", [
    ((), ["2024-11-05"]),
    (("--code", "-32022", "--supported", "2026-07-28"), ["2026-07-28"]),
    (("--supported", "2024-11-05,2025-03-26"), ["2024-11-05", "2025-03-26"]),
], ids=["default", "sdk-modern", "two"])
def test_version_rejected_quotes_data_supported_verbatim(flags, supported, results_root):
    run = measure_and_write(target("version-rejected", "version_rejected", *flags), results_root)
    assert run.record["status"] == "protocol-mismatch", run.notes
    assert f"data.supported: {json.dumps(supported, separators=(',', ':'))}" in run.record["notes"][0]
    assert len(run.measurement.attempts) == 1


# --- two launches ---------------------------------------------------------------------------------

def test_tool_list_changing_between_launches_is_dynamic(tmp_path, results_root, launches_in_order):
    run = measure_and_write(target("changes", "changes_between_launches", "--state", str(tmp_path / "n")),
                            results_root)
    rec = run.record
    assert rec["status"] == "dynamic", run.notes
    assert rec["toolCount"] == 2  # the first (captured) launch's tools
    assert tool_names(run) == ["search_issues", "create_issue"]
    assert "2 vs 3 tools (only in the second: tool_003)" in run.notes and "the first launch's capture" in run.notes


def test_second_launch_failing_keeps_the_first_capture(tmp_path, results_root, launches_in_order):
    run = measure_and_write(target("second-fails", "second_launch_fails", "--state", str(tmp_path / "n")),
                            results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["toolCount"] == 2
    assert "second launch failed" in run.notes
    assert "'Error: something broke'" in run.notes
    assert "the first launch's capture is published" in run.notes


def test_first_launch_failing_then_retry_succeeding_is_measured(tmp_path, results_root, launches_in_order):
    run = measure_and_write(target("first-fails", "second_launch_fails", "--state", str(tmp_path / "n"),
                                   "--fail-first"), results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["toolCount"] == 2
    assert "measured on retry 1" in run.notes
    assert "Error: something broke" in run.notes
    assert rec["attempts"][0]["outcome"].startswith("exited")
    assert rec["attempts"][1]["outcome"] == "listed"


# --- start-up failures that look like other things ------------------------------------------------

def test_unexpected_token_is_startup_failure_not_auth(results_root):
    run = measure_and_write(target("unexpected-token", "unexpected_token"), results_root)
    rec = run.record
    assert rec["status"] == "startup-failure", run.notes
    assert "SyntaxError: Unexpected token '<' in JSON at position 0" in rec["stderrTail"]
    assert "Unexpected token" in run.notes
    assert "retry 1" in run.notes


EVIDENCE = "Error: EXAMPLE_API_KEY environment variable is required"


@pytest.mark.parametrize("host_value", [None, "dummy", "your-api-key"], ids=["undeclared", "dummy", "placeholder"])
def test_needs_api_key_is_auth_required_and_quotes_the_line(host_value, monkeypatch, results_root):
    # undeclared: the child never sees the variable (no host variable reaches it unless declared);
    # otherwise the declared name carries the host's placeholder value.
    monkeypatch.setenv("EXAMPLE_API_KEY", host_value or "sk-live-not-passed-because-undeclared")
    env = ("EXAMPLE_API_KEY",) if host_value else ()
    run = measure_and_write(target("needs-key", "needs_api_key", env=env), results_root)
    rec = run.record
    assert rec["status"] == "auth-required", run.notes
    assert repr(EVIDENCE) in rec["notes"][0]  # the note quotes the line that decided it
    assert EVIDENCE in rec["stderrTail"]
    assert len(run.measurement.attempts) == 1  # auth-required is not a retried status
    assert rec["envVarNames"] == list(env)


def test_needs_api_key_with_the_harness_dummy_value_is_auth_required(monkeypatch, results_root):
    monkeypatch.delenv("EXAMPLE_API_KEY", raising=False)
    run = measure_and_write(target("needs-key-dummy", "needs_api_key", env=("EXAMPLE_API_KEY",)), results_root,
                            pass_declared_values=False)
    assert run.record["status"] == "auth-required", run.notes


# --- not-applicable: declared, then corroborated --------------------------------------------------

def test_not_applicable_when_the_failure_contains_the_declared_evidence(results_root):
    declared = NotApplicable(reason="the package ships no build for linux-x64", evidence="Unexpected token '<'")
    run = measure_and_write(target("declared-na", "unexpected_token", not_applicable=declared), results_root)
    rec = run.record
    assert rec["status"] == "not-applicable", run.notes
    assert declared.reason in run.notes and repr(declared.evidence) in run.notes
    assert len(run.measurement.attempts) == 1  # neither retry applies


def test_declared_evidence_not_in_the_failure_publishes_the_real_failure(results_root):
    declared = NotApplicable(reason="the package ships no build for linux-x64", evidence="EBADPLATFORM")
    run = measure_and_write(target("declared-stale", "unexpected_token", not_applicable=declared), results_root)
    assert run.record["status"] == "startup-failure", run.notes
    assert "EBADPLATFORM" not in run.notes


def test_not_applicable_evidence_does_not_absorb_a_measurement(results_root):
    declared = NotApplicable(reason="needs a backing database", evidence="ECONNREFUSED")
    run = measure_and_write(target("declared-works", "well_behaved", not_applicable=declared), results_root)
    assert run.record["status"] == "measured", run.notes
