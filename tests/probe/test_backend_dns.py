"""A public name that does not resolve, on a machine that resolves no well-known name either, is the
machine's fault whoever looked it up: a server's own backend (``@sveltejs/mcp`` fetching svelte.dev,
``awslabs.aws-api-mcp-server`` fetching servicereference.us-east-1.amazonaws.com) or an install
script's download. Both conditions are checked here and now, so a server cannot fake them: on a
machine with DNS, or for a name that resolves here, or for a name no DNS resolves (``*.invalid``),
the failure stays the server's.

The machine's DNS is set through ``DNS_CONTROL_VARIABLE``: names under ``.invalid`` (resolved by no
one: this machine "has no DNS") or ``localhost`` (resolved everywhere: it "has DNS"). The failing
hosts are unregistered names under a public suffix, which resolve nowhere."""

from __future__ import annotations

import dataclasses

import pytest

from harness.db import importer
from harness.probe import machine_fault, npmlog
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.resolve import Resolved
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401


BACKEND = "docs.mcp-context-cost-no-such-host-4f1c9a.com"  # a public suffix, a name nobody registered
NODE = ("TypeError: fetch failed\n    at node:internal/deps/undici/undici:14976:13 {\n"
        f"  [cause]: Error: getaddrinfo ENOTFOUND {BACKEND}\n      at GetAddrInfoReqWrap.onlookupall "
        "[as oncomplete] (node:dns:122:26) {\n    code: 'ENOTFOUND',\n  }\n}\n\nNode.js v20.20.2\n")
URLLIB3 = ("urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='" + BACKEND + "', port=443): Max retries "
           "exceeded with url: / (Caused by NameResolutionError(\"HTTPSConnection(host='" + BACKEND + "', port=443): "
           "Failed to resolve '" + BACKEND + "' ([Errno -2] Name or service not known)\"))\n"
           "RuntimeError: Error retrieving the service reference document\n")
GO = f"Error: Get \"https://{BACKEND}/v1\": dial tcp: lookup {BACKEND} on 127.0.0.53:53: no such host\n"
AIOHTTP = (f"aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host {BACKEND}:443 ssl:default "
           "[Temporary failure in name resolution]\n")
CURL = f"curl: (6) Could not resolve host: {BACKEND}\n"
TAILS = [NODE, URLLIB3, GO, AIOHTTP, CURL]


def _target(resolved: bool) -> Target:
    target = Target(name="backend", command="npx -y backend-server@1.0.0")
    found = Resolved("npx", "backend-server", "1.0.0", ("backend",), "host", "/nowhere/.bin")
    return dataclasses.replace(target, resolved=found) if resolved else target


def _capture(tail: str, phase: str = "initialize", kind: str = "exited") -> Capture:
    return Capture("1.0.0", phase=phase, stderr_tail=tail, exit_code=1,
                   failure=Failure(kind, phase, "the server exited before replying", exit_code=1))


@pytest.mark.parametrize("resolved", [True, False])
@pytest.mark.parametrize("tail", TAILS)
def test_a_backend_that_does_not_resolve_on_a_machine_without_dns_is_not_measured_here(no_dns, tail, resolved):
    verdict = st.classify(_target(resolved), _capture(tail))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS, verdict
    assert BACKEND in verdict.environment and "control-a.invalid" in verdict.environment
    assert verdict.evidence.startswith("startup-failure here")  # what the server did here is kept beside it


def test_a_timeout_after_the_backend_failed_to_resolve_is_not_measured_here(no_dns):
    verdict = st.classify(_target(True), _capture(NODE, kind="timeout"))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS


@pytest.mark.parametrize("tail", TAILS)
def test_on_a_machine_with_dns_the_same_failure_is_the_server_s(working_dns, tail):
    verdict = st.classify(_target(True), _capture(tail))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


@pytest.mark.parametrize("host", ["api.svelte.invalid", "backend.test", "db.local", "svc.internal", "localhost",
                                  "10.0.0.7", "printer.home.arpa"])
def test_a_name_no_dns_resolves_is_the_server_s_even_without_dns(no_dns, host):
    verdict = st.classify(_target(True), _capture(f"Error: getaddrinfo ENOTFOUND {host}\n"))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def test_a_name_that_resolves_here_is_the_server_s_even_without_dns(no_dns):
    # this machine reaches the npm registry (the tests install from it): the claim is false here
    verdict = st.classify(_target(True), _capture("Error: getaddrinfo ENOTFOUND registry.npmjs.org\n"))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def test_a_refusal_still_names_only_install_hosts(no_dns):
    # no lookup failed: a refused connection to a backend is the server's, DNS or not
    tail = "FetchError: request to https://api.example.com/v1 failed, reason: connect ECONNREFUSED 93.184.216.34:443"
    verdict = st.classify(_target(False), _capture(tail))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def test_the_lookups_are_bounded(no_dns, monkeypatch):
    looked_up = []
    real = machine_fault.resolves_names

    def counting(timeout: float = 5.0, hosts=None):
        looked_up.append(hosts)
        return real(timeout, hosts)

    monkeypatch.setattr(machine_fault, "resolves_names", counting)
    tail = "".join(f"Error: getaddrinfo ENOTFOUND registry.npmjs.org\n" for _ in range(50)) + NODE
    assert machine_fault.unresolved_on_dnsless_machine(tail)[1] == machine_fault.DNS  # each host is looked up once
    tail = "".join(f"Error: getaddrinfo ENOTFOUND host{i}.mcp-context-cost-no-such-host-4f1c9a.com\n" for i in range(50))
    looked_up.clear()
    machine_fault.unresolved_on_dnsless_machine(tail)
    assert len([h for h in looked_up if h and h[0] != "control-a.invalid"]) <= machine_fault.MAX_VERIFIED_HOSTS

# An install script's download: prebuild-install's own words, npm's log as npm keeps a failed script's stderr.
PREBUILD_OTHER_HOST = f"prebuild-install warn install getaddrinfo ENOTFOUND {BACKEND}"
PLAYWRIGHT = f"Error: getaddrinfo ENOTFOUND {BACKEND}\nFailed to download Chromium, caused by Error: download failed"
SCRIPT_LOG = ("849 info run native@1.0.0 install node_modules/native prebuild-install || node-gyp rebuild --release\n"
              "850 info run native@1.0.0 install { code: 1, signal: null }\n"
              "851 error code 1\n852 error path /home/mcp/.npm/_npx/x/node_modules/native\n"
              "853 error command failed\n854 error command sh -c prebuild-install || node-gyp rebuild --release\n"
              "855 error {said}\n856 error gyp ERR! stack Error: `make` failed with exit code: 2\n")


def _script_tail(said: str) -> str:
    """An install's tail as harness.probe.install quotes npm's log under a silent install."""
    return f"npm error code 1\n{npmlog.PREFIX}{npmlog.decisive(SCRIPT_LOG.replace('{said}', said))}\n"


@pytest.mark.parametrize("said, cause", [
    ("prebuild-install warn install getaddrinfo ENOTFOUND github.com", machine_fault.DOWNLOAD_BLOCKED),
    (PREBUILD_OTHER_HOST, machine_fault.DOWNLOAD_BLOCKED),
])
def test_an_install_script_whose_download_did_not_resolve_is_not_measured_here(no_dns, said, cause):
    tail = _script_tail(said)
    verdict = st.classify(_target(False), _capture(tail, phase="install"))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == cause, verdict
    assert "ENOTFOUND" in verdict.environment


def test_a_postinstall_browser_download_that_did_not_resolve_is_download_blocked(no_dns):
    verdict = st.classify(_target(False), _capture(PLAYWRIGHT, phase="install"))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DOWNLOAD_BLOCKED, verdict


@pytest.mark.parametrize("said", [
    "gyp ERR! stack Error: not found: make",  # the build failed, no download was tried
    "prebuild-install warn install No prebuilt binaries found (target=20.20.2 runtime=node arch=x64 platform=linux)",
    "Error: getaddrinfo ENOTFOUND downloads.example.invalid",  # a name no DNS resolves
])
def test_an_install_script_failing_for_another_reason_is_the_package_s(no_dns, said):
    tail = _script_tail(said)
    verdict = st.classify(_target(False), _capture(tail, phase="install"))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def test_with_dns_an_install_script_s_unresolved_download_host_is_the_package_s(working_dns):
    tail = _script_tail(PREBUILD_OTHER_HOST)
    verdict = st.classify(_target(False), _capture(tail, phase="install"))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


@pytest.mark.parametrize("cause", [machine_fault.DNS, machine_fault.DOWNLOAD_BLOCKED])
def test_triage_does_not_call_such_a_server_broken(cause):
    rec = {"status": "not-measured-here", "environmentCause": cause, "environmentEvidence": "svelte.dev does not resolve",
           "notes": ["startup-failure here, …; environment evidence (the measuring machine's name resolution, not the "
                     "server): 'svelte.dev does not resolve here'"]}
    outcome, evidence = importer.classify(rec, None)
    assert outcome == importer.NEEDS_RUNTIME and "environment evidence" in evidence


@pytest.mark.parametrize("claim, status", [
    (f"Error: getaddrinfo ENOTFOUND {BACKEND}", "not-measured-here"),
    ("Error: getaddrinfo ENOTFOUND api.backend.invalid", "startup-failure"),
    ("Error: getaddrinfo ENOTFOUND registry.npmjs.org", "startup-failure"),
])
def test_a_real_server_whose_backend_does_not_resolve(results_root, no_dns, claim, status):  # noqa: F811
    from tests.conftest import fixture_command

    target = Target(name="backend-dns", command=fixture_command("claims_machine_fault"), set_env=(("CLAIM", claim),),
                    timeout_seconds=30)
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == status, run.notes
    assert (run.record.get("environmentCause") == "dns") == (status == "not-measured-here")
