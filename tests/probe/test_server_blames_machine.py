"""A server cannot pass its own failure off as the measuring machine's: words about networks,
downloads and interpreters in the stderr of a launch that started from the harness's own install
are the server's (the package manager ran, and reached the registry, in the install); a host a
launch through ``npx``/``uvx`` says does not resolve must not resolve here either; a host named
whole (``api.github.com`` is a backend, not ``github.com``); an engine requirement counts only
when this machine's Node is below it. The package manager's own words in an install still count."""

from __future__ import annotations

import dataclasses

import pytest

from harness.probe import machine_fault, node_engine
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.resolve import Resolved
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401


ENGINE_MET = ("npm warn EBADENGINE Unsupported engine {\nnpm warn EBADENGINE   package: 'x@1.0.0',\n"
              "npm warn EBADENGINE   required: { node: '>=18' },\nnpm warn EBADENGINE   current: { node: 'v16.0.0' }\n"
              "npm warn EBADENGINE }\n")
ENGINE_UNMET = ENGINE_MET.replace(">=18", ">=24")  # a released Node this machine's is older than
ENGINE_IMPOSSIBLE = ENGINE_MET.replace(">=18", ">=99")
NPM_DNS = ("npm error code ENOTFOUND\nnpm error network request to https://registry.npmjs.org/x failed, reason: "
           "getaddrinfo ENOTFOUND registry.npmjs.org\n")
CLAIMS = [
    "Error: getaddrinfo ENOTFOUND registry.npmjs.org",
    NPM_DNS,
    "Error: getaddrinfo ENOTFOUND api.github.com",
    "FetchError: request to https://api.github.com/user failed, reason: getaddrinfo ENOTFOUND api.github.com",
    "Error: connect ECONNREFUSED gitlab.com:443",
    "error: No interpreter found for Python >=3.99 in managed installations or search path",
    "prebuild-install warn install getaddrinfo ENOTFOUND github.com\nError: Cannot find module 'x.node'",
    "Error: request to https://github.com/o/r/releases/download/v1/bin failed, reason: getaddrinfo ENOTFOUND github.com",
    "npm error code SELF_SIGNED_CERT_IN_CHAIN",
    ENGINE_MET,
]


def _target(resolved: bool) -> Target:
    target = Target(name="blames", command="npx -y blames-the-machine@1.0.0")
    found = Resolved("npx", "blames-the-machine", "1.0.0", ("blames",), "host", "/nowhere/.bin")
    return dataclasses.replace(target, resolved=found) if resolved else target


def _capture(tail: str, phase: str = "initialize") -> Capture:
    return Capture("1.0.0", phase=phase, stderr_tail=tail, exit_code=1,
                   failure=Failure("exited", phase, "the server exited", exit_code=1))


@pytest.mark.parametrize("tail", CLAIMS)
def test_a_launch_from_the_harness_s_install_speaks_for_the_server(tail, working_dns):
    verdict = st.classify(_target(resolved=True), _capture(tail))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def test_an_engine_requirement_this_node_does_not_meet_still_counts_after_an_install():
    if node_engine.node_version() >= (24,):
        pytest.skip("this machine's Node meets the requirement")
    verdict = st.classify(_target(resolved=True), _capture(ENGINE_UNMET))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.RUNTIME_VERSION
    assert ">=24" in verdict.environment


def test_the_package_manager_s_own_words_in_an_install_count(monkeypatch):
    monkeypatch.setenv("npm_config_registry", "https://registry.npmjs.invalid/")  # the registry this machine uses
    tail = NPM_DNS.replace("registry.npmjs.org", "registry.npmjs.invalid")  # a host that truly does not resolve
    verdict = st.classify(_target(resolved=True), _capture(tail, phase="install"))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DNS


@pytest.mark.parametrize("phase", ["install", "initialize"])
def test_a_resolution_failure_of_a_host_this_machine_resolves_is_no_evidence(phase):
    # an install script or a server printing npm's own lines about the registry this machine reaches
    verdict = st.classify(_target(resolved=False), _capture(NPM_DNS, phase=phase))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def test_an_npm_log_an_install_script_planted_is_checked_like_any_other_line(monkeypatch):
    from harness.probe import npmlog

    monkeypatch.setenv("npm_config_registry", "https://registry.npmjs.invalid/")

    planted = ("12 error code ENOTFOUND\n13 error network request to https://registry.npmjs.org/x failed, reason: "
               "getaddrinfo ENOTFOUND registry.npmjs.org\n14 error command failed\n15 error command sh -c node broken.js\n")
    def verdict(log: str) -> st.Verdict:  # as harness.probe.install quotes the log under a silent install
        tail = f"npm error code 1\n{npmlog.PREFIX}{npmlog.decisive(log)}\n"
        return st.classify(_target(resolved=False), _capture(tail, phase="install"))

    assert verdict(planted).status == st.STARTUP_FAILURE
    real = verdict(planted.replace("registry.npmjs.org", "registry.npmjs.invalid"))
    assert real.status == st.NOT_MEASURED_HERE and real.cause == machine_fault.DNS


@pytest.mark.parametrize("line", [
    "Error: getaddrinfo ENOTFOUND api.github.com",
    "Error: connect ECONNREFUSED api.gitlab.com:443",
    "Error: getaddrinfo ENOTFOUND my-pypi.org.example",
    "Error: getaddrinfo ENOTFOUND registry.npmjs.org.evil.invalid",  # a registry's name as a prefix
    "fatal: unable to access 'https://github.com.invalid/o/r/': Could not resolve host: github.com.invalid",
])
def test_a_backend_on_a_registry_s_domain_is_not_the_registry(line):
    assert machine_fault.evidence(line) is None


@pytest.mark.parametrize("line,cause", [
    ("npm error network request to https://codeload.github.com/o/r/tar.gz/abc failed, reason: getaddrinfo "
     "ENOTFOUND codeload.github.com", machine_fault.DNS),
    ("prebuild-install warn install request to https://objects.githubusercontent.com/x failed, reason: "
     "getaddrinfo EAI_AGAIN objects.githubusercontent.com", machine_fault.DOWNLOAD_BLOCKED),
])
def test_the_hosts_an_install_reaches_still_count(line, cause):
    assert machine_fault.evidence_and_cause(line) == (line, cause)


def test_an_engine_requirement_this_node_meets_is_no_evidence_whatever_current_the_text_claims():
    assert node_engine.engine_line(ENGINE_MET) is None
    assert node_engine.engine_line(ENGINE_UNMET) is not None


@pytest.mark.parametrize("claim", [
    "Error: getaddrinfo ENOTFOUND registry.npmjs.org",  # this machine reaches the npm registry: tests install from it
    "npm error network request to https://pypi.org/simple/x/ failed, reason: getaddrinfo EAI_AGAIN pypi.org",
    "Error: getaddrinfo ENOTFOUND api.github.com",
])
def test_a_real_server_blaming_the_machine_is_its_own_failure(results_root, claim, working_dns):  # noqa: F811
    from tests.conftest import fixture_command

    target = Target(name="blames", command=fixture_command("claims_machine_fault"), set_env=(("CLAIM", claim),),
                    timeout_seconds=30)
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == "startup-failure", run.notes
    assert "environmentEvidence" not in run.record and "environment evidence" not in run.notes


@pytest.mark.parametrize("tail,status", [
    ("Provide an access token or set INSTANT_ACCESS_TOKEN\nError: Cannot find module './dist/tools.js'\n"
     "    at Module._resolveFilename (node:internal/modules/cjs/loader:1140:15)\n", st.STARTUP_FAILURE),
    ("Warning: FOO_TOKEN is not set\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
     "ModuleNotFoundError: No module named 'pydantic_core._pydantic_core'\n", st.STARTUP_FAILURE),
    ("Please set the FIRECRAWL_API_KEY environment variable\nReferenceError: fetch is not defined\n", st.STARTUP_FAILURE),
    # the credential request is the failure: what follows it is its stack or a JSON reply it could not parse
    ("Provide an access token or set INSTANT_ACCESS_TOKEN\n    at main (/x.js:1:1)\nNode.js v20.20.2\n", st.AUTH_REQUIRED),
    ("Error: FOO_TOKEN is required\nSyntaxError: Unexpected token '<' in JSON at position 0\n", st.AUTH_REQUIRED),
    ("Error: FOO_TOKEN environment variable is required\n", st.AUTH_REQUIRED),
])
def test_a_credential_request_followed_by_a_broken_package_is_the_package_s_failure(tail, status):
    assert st.classify(_target(resolved=True), _capture(tail)).status == status


def test_a_tail_naming_many_hosts_costs_a_bounded_number_of_lookups(monkeypatch):
    looked_up = []
    real = machine_fault.resolves_names

    def counting(timeout: float = 5.0, hosts=None):
        looked_up.append(hosts)
        return real(timeout, hosts)

    monkeypatch.setattr(machine_fault, "resolves_names", counting)
    tail = "".join(f"Error: getaddrinfo ENOTFOUND host{i}.invalid\n" for i in range(200))
    machine_fault.evidence(tail, verify_hosts=True)
    assert len(looked_up) == machine_fault.MAX_VERIFIED_HOSTS


def test_decoys_before_the_claim_do_not_use_up_the_lookups():
    decoys = "".join(f"Error: getaddrinfo ENOTFOUND decoy{i}.invalid\n" for i in range(machine_fault.MAX_VERIFIED_HOSTS + 2))
    tail = decoys + "npm error network request to https://registry.npmjs.org/x failed, reason: getaddrinfo ENOTFOUND " \
                    "registry.npmjs.org\n"
    assert machine_fault.evidence(tail, verify_hosts=True) is None

# A server failing to reach its own backend, in the words node-fetch, node's net module and uv-style
# clients use: in a launch through npx/uvx (no install of the harness's) these name no install host.
BACKEND_FAILURES = [
    "FetchError: request to http://localhost:5432/ failed, reason: connect ECONNREFUSED 127.0.0.1:5432",
    "FetchError: request to https://api.example.com/v1/me failed, reason: connect ECONNREFUSED 93.184.216.34:443",
    "Error: connect ECONNREFUSED 127.0.0.1:5432\nnpm error code ECONNREFUSED",  # a code line with no npm request
    "error: Failed to fetch: https://api.example.com/data\n  cause: Connection refused (os error 111)",
    "Error: request to https://db.internal:8443/health failed, reason: connect ETIMEDOUT 10.1.2.3:8443",
    "npm error code ECONNRESET\nnpm error network request to https://registry.npmjs.org.evil.example/x failed, "
    "reason: socket hang up ECONNRESET",
]


@pytest.mark.parametrize("tail", BACKEND_FAILURES)
def test_a_backend_refusing_a_bare_launch_is_the_server_s_failure(tail):
    verdict = st.classify(_target(resolved=False), _capture(tail))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


@pytest.mark.parametrize("tail", [
    "npm error code ECONNREFUSED\nnpm error errno ECONNREFUSED\nnpm error network request to "
    "https://registry.npmjs.org/x failed, reason: connect ECONNREFUSED 10.0.0.1:3128",
    "error: Failed to fetch: https://pypi.org/simple/x/\n  cause: Connection refused (os error 111)",
    "Error: connect ECONNREFUSED registry.npmjs.org:443",
])
def test_a_refusal_by_a_registry_this_machine_reaches_is_no_evidence(tail):
    # the tests install from npm and PyPI here, so a server printing these lines says something false
    assert machine_fault.accepts_connections("registry.npmjs.org")
    verdict = st.classify(_target(resolved=False), _capture(tail))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again on return: nothing listens there


@pytest.mark.parametrize("setting, tail", [
    ("npm_config_registry", "npm error code ECONNREFUSED\nnpm error network request to http://127.0.0.1:{port}/x "
                            "failed, reason: connect ECONNREFUSED 127.0.0.1:{port}"),
    ("UV_INDEX_URL", "error: Failed to fetch: http://127.0.0.1:{port}/simple/x/\n  cause: error sending request\n"
                     "  cause: Connection refused (os error 111)"),
])
def test_the_configured_registry_refusing_is_the_machine_s(setting, tail):
    port = _closed_port()
    target = dataclasses.replace(_target(resolved=False), set_env=((setting, f"http://127.0.0.1:{port}/simple"),))
    verdict = st.classify(target, _capture(tail.format(port=port)))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.REGISTRY, verdict
    assert f"127.0.0.1:{port}" in verdict.environment
    elsewhere = st.classify(_target(resolved=False), _capture(tail.format(port=port)))  # not this launch's registry
    assert elsewhere.status == st.STARTUP_FAILURE, elsewhere


@pytest.mark.slow
def test_npm_refused_by_its_registry_is_not_measured_here(results_root):  # noqa: F811
    port = _closed_port()
    target = Target(name="refused", command="npx -y @modelcontextprotocol/server-memory@2025.4.25", timeout_seconds=60,
                    set_env=(("npm_config_registry", f"http://127.0.0.1:{port}/"), ("npm_config_fetch_retries", "0")))
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == "not-measured-here", run.notes
    assert run.record["environmentCause"] == "registry" and f"127.0.0.1:{port}" in run.record["environmentEvidence"]


@pytest.mark.parametrize("resolved", [True, False])
@pytest.mark.parametrize("tail", [
    ENGINE_IMPOSSIBLE,
    ENGINE_MET.replace(">=18", "^99.0.0 || >=100"),
    "Error: this package requires Node.js >= 99.0.0\n",
    "npm warn EBADENGINE Unsupported engine {\nnpm warn EBADENGINE   package: 'x@1.0.0',\n"
    "npm warn EBADENGINE   required: { node: '>= 412.1' },\nnpm warn EBADENGINE   current: { node: 'v20.0.0' }\n"
    "npm warn EBADENGINE }\n",
])
def test_an_engine_no_released_node_meets_is_the_package_s_failure(tail, resolved):
    verdict = st.classify(_target(resolved=resolved), _capture(tail))
    assert verdict.status == st.STARTUP_FAILURE and verdict.environment is None, verdict
    assert "which no released Node satisfies" in verdict.evidence


@pytest.mark.parametrize("requirement, day, impossible", [
    (">=99", "2026-12-01", True),
    (">=27", "2026-12-01", False),  # Node 27 is due in October 2026
    (">=27", "2026-09-30", True),
    ("^20 || >=99", "2026-12-01", False),  # one released branch is enough
    (">=22.99", "2026-12-01", False),  # a minor not known to exist is not known not to
    ("*", "2026-12-01", False),
    (">=21", "2023-09-30", True),
    (">=21", "2023-10-01", False),
])
def test_which_engine_requirements_no_released_node_meets(requirement, day, impossible):
    import datetime as dt

    assert node_engine.unsatisfiable(requirement, dt.date.fromisoformat(day)) is impossible


def test_an_impossible_engine_is_not_a_reason_to_import_as_needing_a_runtime():
    from harness.db import importer
    from harness.db.package_meta import Package

    rec = {"status": "startup-failure", "notes": ["the server exited; the package requires node >=99, which no "
                                                  "released Node satisfies (the newest major by now is at most 27)",
                                                  "the install warned: npm EBADENGINE: x@1.0.0 requires node >=99"]}
    pkg = Package("npm", "x", "1.0.0", "1.0.0", runtime=">=99")
    assert importer.classify(rec, pkg)[0] == importer.BROKEN
    assert importer.classify(rec | {"notes": ["it crashed"]}, pkg)[0] == importer.BROKEN
