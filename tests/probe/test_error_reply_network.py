"""A server's JSON-RPC error reply is read by the same environment rules as its stderr: a request it made
that failed because this machine resolves no name (undici's bare ``fetch failed``, a URL whose host does
not resolve, ``getaddrinfo ENOTFOUND``) is ``not-measured-here``, never the server's failure; with working
DNS, for a local host, or when the failure shows a connection made to an address, it stays the server's.
The machine's DNS is set through ``DNS_CONTROL_VARIABLE`` as in test_backend_dns."""

from __future__ import annotations

import dataclasses

import pytest

from harness.probe import machine_fault
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.resolve import Resolved
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401


BACKEND = "api.mcp-context-cost-no-such-host-7d2e1b.com"  # a public suffix, a name nobody registered


def _target() -> Target:
    target = Target(name="backend", command="npx -y backend-server@1.0.0")
    return dataclasses.replace(target, resolved=Resolved("npx", "backend-server", "1.0.0", ("backend",), "host",
                                                         "/nowhere/.bin"))


def _error(message: str, data: object = None, stderr: str = "", phase: str = "tools/list page 1") -> Capture:
    failure = Failure("jsonrpc-error", phase, f"JSON-RPC error -32603: {message}", code=-32603, message=message,
                      data=data)
    return Capture("1.0.0", phase=phase, stderr_tail=stderr, failure=failure)


MACHINE_S = [
    ("fetch failed", None),  # @supabase/mcp-server-supabase: undici's message, its cause left out
    ("TypeError: fetch failed", None),
    (f"21st MCP endpoint unreachable (https://{BACKEND}/api/mcp): fetch failed", None),  # @21st-dev/magic
    (f"request to https://{BACKEND}/v1 failed", None),
    (f"getaddrinfo ENOTFOUND {BACKEND}", None),
    ("Internal error", {"cause": f"Error: getaddrinfo EAI_AGAIN {BACKEND}"}),  # the cause in error.data
    ("Failed to fetch", {"url": f"https://{BACKEND}/graphql"}),
]


@pytest.mark.parametrize("message, data", MACHINE_S)
@pytest.mark.parametrize("phase", ["initialize", "tools/list page 1"])
def test_a_request_that_failed_for_want_of_dns_is_not_measured_here(no_dns, message, data, phase):
    verdict = st.classify(_target(), _error(message, data, phase=phase))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict
    assert "control-a.invalid" in verdict.environment and verdict.evidence.startswith("startup-failure here")


@pytest.mark.parametrize("message, data", MACHINE_S)
def test_with_working_dns_the_same_reply_is_the_server_s(working_dns, message, data):
    verdict = st.classify(_target(), _error(message, data))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


@pytest.mark.parametrize("message, data", [
    ("fetch failed", {"cause": "connect ECONNREFUSED 127.0.0.1:5432"}),  # a local database that is not running
    ("Ollama unreachable (http://localhost:11434): fetch failed", None),
    ("fetch failed (http://db.internal:8080/health)", None),  # a private network's own name
    ("fetch failed", {"cause": "connect ECONNREFUSED 93.184.216.34:443"}),  # the name resolved: the backend refused
    (f"fetch failed (https://{BACKEND}/x)", {"cause": "Connection refused (os error 111)"}),  # a connection was made
    ("request to https://registry.npmjs.org/x failed", None),  # a name that resolves here
    ("fetch failed for host.docker.internal", None),
    ("Internal error: database unavailable", None),  # no request at all
])
def test_a_local_host_a_connection_made_or_a_name_that_resolves_is_the_server_s(no_dns, message, data):
    verdict = st.classify(_target(), _error(message, data))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def test_a_bare_fetch_failed_on_stderr_reads_the_same(no_dns):
    capture = Capture("1.0.0", phase="initialize", stderr_tail="TypeError: fetch failed\n    at node:internal/deps/undici"
                      "/undici:13510:13\n\nNode.js v20.20.2\n", exit_code=1,
                      failure=Failure("exited", "initialize", "the server exited before replying", exit_code=1))
    verdict = st.classify(_target(), capture)
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict


def test_a_crash_of_the_package_s_own_still_outranks_the_reply(no_dns):
    capture = _error("fetch failed", stderr="Error: Cannot find module './lib/client.js'\n")
    verdict = st.classify(_target(), capture)
    assert verdict.status == st.STARTUP_FAILURE, verdict


@pytest.mark.parametrize("message, status", [
    ("fetch failed", "not-measured-here"),
    (f"endpoint unreachable (https://{BACKEND}/mcp): fetch failed", "not-measured-here"),
    ("endpoint unreachable (http://127.0.0.1:9/mcp): fetch failed", "startup-failure"),
])
@pytest.mark.parametrize("on", ["initialize", "tools/list"])
def test_a_real_server_whose_reply_says_its_request_failed(results_root, no_dns, message, status, on):  # noqa: F811
    from tests.conftest import fixture_command

    target = Target(name="reply-dns", command=fixture_command("jsonrpc_error", "--on", on, "--code", "-32000",
                                                             "--message", message), timeout_seconds=30)
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == status, run.notes
    assert (run.record.get("environmentCause") == "dns") == (status == "not-measured-here")
