"""A server's own crash outranks machine-fault words it printed first. A lookup, download or registry
failure never makes a module go missing or code stop parsing, so a tail that ends in such a crash is
the package's ``startup-failure`` whatever it said about the network before (a broken server must not
keep an older good record by printing a failed lookup). An unmet Node engine is different: an old
Node is exactly what makes new code fail to parse or a global be undefined. npm's own lines are
never a server asking for a credential."""

from __future__ import annotations

import dataclasses

import pytest

from harness.probe import machine_fault, node_engine
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.resolve import Resolved
from harness.probe.target import Target


BACKEND = "telemetry.mcp-context-cost-no-such-host-7d2e.com"
LOOKUPS = [f"warn: telemetry: getaddrinfo ENOTFOUND {BACKEND}\n",
           f"WARNING Failed to resolve '{BACKEND}' ([Errno -2] Name or service not known)\n",
           f"curl: (6) Could not resolve host: {BACKEND}\n"]
CRASHES = ["Error: Cannot find module 'acme-core'\nRequire stack:\n- /srv/index.js\n",
           "Traceback (most recent call last):\n  File \"server.py\", line 3\nModuleNotFoundError: No module named 'acme'\n",
           "file:///srv/index.js:3\nSyntaxError: Unexpected identifier 'acme'\n",
           "ReferenceError: acmeClient is not defined\n    at main (/srv/index.js:9:3)\n"]


def _target(resolved: bool) -> Target:
    target = Target(name="crash", command="npx -y crash-server@1.0.0")
    found = Resolved("npx", "crash-server", "1.0.0", ("crash",), "host", "/nowhere/.bin")
    return dataclasses.replace(target, resolved=found) if resolved else target


def _capture(tail: str, phase: str = "initialize", kind: str = "exited") -> Capture:
    return Capture("1.0.0", phase=phase, stderr_tail=tail, exit_code=1,
                   failure=Failure(kind, phase, "the server exited before replying", exit_code=1))


@pytest.mark.parametrize("resolved", [True, False])
@pytest.mark.parametrize("crash", CRASHES)
@pytest.mark.parametrize("lookup", LOOKUPS)
def test_a_crash_after_a_failed_lookup_is_the_server_s(no_dns, lookup, crash, resolved):
    verdict = st.classify(_target(resolved), _capture(lookup + crash))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


@pytest.mark.parametrize("lookup", [f"Error: getaddrinfo ENOTFOUND {BACKEND}\n", *LOOKUPS[1:]])
def test_the_failed_lookup_that_ends_the_tail_is_still_the_machine_s(no_dns, lookup):
    verdict = st.classify(_target(True), _capture(CRASHES[0] + lookup))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict


@pytest.mark.parametrize("reply", ["SyntaxError: Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON\n",
                                   "SyntaxError: Unexpected end of JSON input\n",
                                   "SyntaxError: Unexpected token < in JSON at position 0\n"])
def test_an_error_page_read_as_json_after_a_failed_lookup_is_no_crash_of_the_package(no_dns, reply):
    verdict = st.classify(_target(True), _capture(LOOKUPS[0] + reply))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict


def test_a_crash_in_an_install_after_a_blocked_download_stays_the_machine_s(no_dns):
    tail = f"prebuild-install warn install getaddrinfo ENOTFOUND {BACKEND}\n{CRASHES[0]}"
    verdict = st.classify(_target(False), _capture(tail, phase="install"))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DOWNLOAD_BLOCKED, verdict


def test_an_unmet_engine_before_a_crash_stays_the_machine_s(monkeypatch):
    monkeypatch.setattr(node_engine, "_NODE", [(20, 20, 2)])
    tail = "This server requires Node.js >= 22\nSyntaxError: Invalid regular expression flags\n"
    verdict = st.classify(_target(True), _capture(tail))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.RUNTIME_VERSION, verdict


@pytest.mark.parametrize("tail", [
    "npm error code E401\nnpm error Unable to authenticate, your authentication token seems to be invalid.\n",
    "npm error code E401\nnpm error 401 Unauthorized - GET https://registry.npmjs.org/x - authentication token not provided\n",
    "npm ERR! code E401\nnpm ERR! Incorrect or missing password.\n",
    "npm warn config the access token is not set for //registry.npmjs.org/\nnpm error code E404\n",
])
def test_npm_s_own_words_are_never_a_server_asking_for_a_credential(tail):
    verdict = st.classify(_target(False), _capture(tail, phase="install"))
    assert verdict.status == st.STARTUP_FAILURE, verdict


def test_a_server_asking_for_a_credential_beside_npm_s_lines_is_still_auth_required():
    tail = "npm warn exec The following package was not found and will be installed: x@1.0.0\n" \
           "Error: Please set the ACME_API_KEY environment variable\n"
    verdict = st.classify(_target(False), _capture(tail))
    assert verdict.status == st.AUTH_REQUIRED and "ACME_API_KEY" in verdict.evidence, verdict
