"""A failed request whose words show it was answered (an HTTP status, a refusal, a certificate, an expired
token), a credential named in the error's data, or a bare "Failed to fetch" about a file or a path, stays the
server's even on a machine without DNS; and no line, however long, makes the request rules slow."""

from __future__ import annotations

import dataclasses
import time

import pytest

from harness.probe import machine_fault
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.resolve import Resolved
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401


BACKEND = "api.mcp-context-cost-no-such-host-7d2e1b.com"


def _target() -> Target:
    target = Target(name="backend", command="npx -y backend-server@1.0.0")
    return dataclasses.replace(target, resolved=Resolved("npx", "backend-server", "1.0.0", ("backend",), "host",
                                                         "/nowhere/.bin"))


def _error(message: str, data: object = None, stderr: str = "") -> Capture:
    failure = Failure("jsonrpc-error", "tools/list page 1", f"JSON-RPC error -32603: {message}", code=-32603,
                      message=message, data=data)
    return Capture("1.0.0", phase="tools/list page 1", stderr_tail=stderr, failure=failure)


SERVER_S = [
    ("Failed to fetch", {"detail": "invalid API key"}),  # the credential only in error.data
    ("Failed to fetch", {"message": "Your token has expired"}),
    ("fetch failed", {"status": 401, "statusText": "Unauthorized"}),
    ("Failed to fetch", {"response": {"status": 429}}),
    ("Failed to fetch tools: 401 Unauthorized", None),
    ("Failed to fetch: HTTP 500 Internal Server Error", None),
    (f"request to https://{BACKEND}/v1 failed with status 403", None),
    (f"network error: https://{BACKEND} returned 404 Not Found", None),
    ("fetch failed", {"cause": "self signed certificate in certificate chain"}),  # a TLS handshake: connected
    ("fetch failed", {"cause": {"code": "UND_ERR_CONNECT_TIMEOUT"}}),
    ("Failed to fetch config file ./config.json: ENOENT: no such file or directory", None),
    ("Failed to fetch the workspace /home/u/project", None),
    ("Failed to fetch user 42: not found", None),
    ("\uff46\uff45\uff54\uff43\uff48 failed", None),  # full-width look-alikes are not undici's words
    ("fetch failed", {"cause": {"code": "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"}}),
    ("fetch failed", {"cause": "write EPROTO"}),
    (f"internal error: entered unreachable code (see https://{BACKEND}/issues)", None),  # a Rust panic, a docs link
]


@pytest.mark.parametrize("message, data", SERVER_S)
def test_an_answered_request_a_credential_or_a_local_thing_is_the_server_s(no_dns, message, data):
    verdict = st.classify(_target(), _error(message, data))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


@pytest.mark.parametrize("stderr", [
    "TypeError: fetch failed\nError: HTTP 503 Service Unavailable\n",
    f"request to https://{BACKEND}/x failed\nstatusCode=401\n",
    "Failed to fetch schema file: ENOENT\n",
])
def test_the_same_on_stderr(no_dns, stderr):
    assert machine_fault.unresolved_on_dnsless_machine(stderr) is None


@pytest.mark.parametrize("words", ["(exit status: 128)", "exit status 128"])
def test_an_exit_status_is_no_answer(words):
    assert not machine_fault.ANSWERED.search(words)


def test_what_the_rules_accept_still_counts(no_dns):
    for message, data in [("fetch failed", None), (f"request to https://{BACKEND}/v1 failed", None),
                          ("Failed to fetch", {"url": f"https://{BACKEND}/graphql"})]:
        verdict = st.classify(_target(), _error(message, data))
        assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict


@pytest.mark.parametrize("filler", ["a.", "a-", "ab", "a:/"])
def test_a_long_line_is_read_in_linear_time(no_dns, filler):
    line = "fetch failed " + filler * 30_000
    started = time.process_time()
    machine_fault.unresolved_on_dnsless_machine(line)
    st.classify(_target(), _error(line))
    assert time.process_time() - started < 2.0  # a quadratic URL pattern takes minutes on this line


def test_a_real_server_whose_error_says_unauthorized(results_root, no_dns):  # noqa: F811
    from tests.conftest import fixture_command

    target = Target(name="reply-answered", command=fixture_command(
        "jsonrpc_error", "--code", "-32000", "--message", "Failed to fetch",
        "--data", '{"status": 401, "body": "invalid API key"}'), timeout_seconds=30)
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == "startup-failure", run.notes
    assert run.record.get("environmentCause") is None


def _exited(stderr: str) -> Capture:
    return Capture("1.0.0", phase="initialize", stderr_tail=stderr, exit_code=1,
                   failure=Failure("exited", "initialize", "the server exited before replying", exit_code=1))


@pytest.mark.parametrize("stderr", [
    "[update-check] Failed to fetch latest version\nTypeError: Cannot read properties of undefined (reading 'tools')\n"
    "    at main (/app/dist/index.js:3:4)\n",
    "warning: telemetry: fetch failed\nError: Invalid configuration: 'mode' must be one of a, b\n",
    f"[telemetry] request to https://{BACKEND}/v1 failed\nZodError: [{{\"code\":\"invalid_type\"}}]\n",
])
def test_a_request_failing_before_another_error_is_not_what_it_died_of(no_dns, stderr):
    verdict = st.classify(_target(), _exited(stderr))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


@pytest.mark.parametrize("stderr", [
    "TypeError: fetch failed\n    at node:internal/deps/undici/undici:13510:13\n\nNode.js v20.20.2\n",
    f"starting\nError: request to https://{BACKEND}/v1 failed\n    at ClientRequest.<anonymous> (x.js:1:2)\n",
])
def test_a_request_failure_that_is_the_last_error_still_counts(no_dns, stderr):
    verdict = st.classify(_target(), _exited(stderr))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict


def test_many_error_words_on_one_line_are_read_in_linear_time(no_dns):
    line = "Error " * 40_000 + "fetch failed"
    started = time.process_time()
    machine_fault.unresolved_on_dnsless_machine(line + "\n" + line)
    assert time.process_time() - started < 2.0


def test_a_real_server_that_warned_of_a_failed_request_then_crashed(results_root, no_dns):  # noqa: F811
    from tests.conftest import fixture_command

    target = Target(name="warned", command=fixture_command("claims_machine_fault"), timeout_seconds=30,
                    set_env=(("CLAIM", "[telemetry] fetch failed\\nTypeError: Cannot read properties of undefined"),))
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == "startup-failure" and run.record.get("environmentCause") is None, run.notes
