"""Evidence from the real cause: the decisive line wherever the toolchain wrote it — an install's
stderr, npm's debug log in the cache when npm printed nothing, an engine requirement this
machine's Node does not meet — and credentials asked for in the words servers really use.

Real npm throughout: pinned packages that need Node 22 (this machine has 20), packages and versions
the registry does not have with npm told to print nothing, and a fixture package in a temp npm
project whose install script fails the way a native module's prebuilt download does here.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from harness.probe import machine_fault, node_engine, npmlog, build_record
from harness.probe.measure import measure_sync
from harness.probe.outcome import Capture, Failure
from harness.probe.status import AUTH_REQUIRED, classify, credential_request
from harness.probe.target import Target


@pytest.fixture(autouse=True)
def _cold_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "harness-cache"))


def _record(name: str, command: str, *set_env: tuple[str, str]) -> dict:
    target = Target(name=name, command=command, set_env=set_env, timeout_seconds=60)
    return build_record.build(measure_sync(target, isolation="sandbox", pass_declared_values=False, dual=False))


@pytest.mark.slow
@pytest.mark.parametrize("name, command, required", [
    ("dbhub", "npx -y @bytebase/dbhub@1.4.0 --transport stdio --demo", ">=22.5.0"),
    ("lsmcp", "npx -y @mizchi/lsmcp@0.10.0", ">=22.0.0"),
])
def test_a_package_that_needs_a_newer_node_is_not_measured_here(name, command, required):
    if node_engine.node_version() >= (22,):
        pytest.skip("this machine's Node meets the requirement")
    evidence = []
    for warm in (False, True):  # a cold install and a warm one say the same, from what is installed
        rec = _record(name, command)
        assert rec["status"] == "not-measured-here", (warm, rec["notes"])
        assert rec["environmentCause"] == "runtime-version"
        assert f"declares engines.node '{required}'" in rec["environmentEvidence"]
        assert "this machine has v" in rec["environmentEvidence"]
        assert "ERR_UNKNOWN_BUILTIN_MODULE" in rec["notes"][0]  # the server's own words are kept beside it
        evidence.append(rec["environmentEvidence"])
    assert evidence[0] == evidence[1]


@pytest.mark.slow
def test_a_server_asking_for_credentials_is_auth_required_whatever_its_engine_says():
    """backlog-mcp-server declares Node 22 (npm warns) and then asks for its credentials: on any
    Node it would ask, so the credential decides."""
    rec = _record("backlog", "npx -y backlog-mcp-server@0.20.4")
    assert rec["status"] == AUTH_REQUIRED, rec["notes"]
    assert "BACKLOG_API_KEY" in rec["notes"][0] and "environmentEvidence" not in rec


@pytest.mark.slow
@pytest.mark.parametrize("spec, said", [
    ("@mcp-context-cost-test/no-such-package@1.0.0", "npm error 404"),
    ("@modelcontextprotocol/server-memory@999.0.0", "npm error notarget No matching version found for "
                                                     "@modelcontextprotocol/server-memory@999.0.0"),
])
def test_an_install_that_printed_nothing_is_explained_from_npm_s_log(spec, said):
    rec = _record("silent", f"npx -y {spec}", ("npm_config_loglevel", "silent"))
    assert rec["status"] == "startup-failure" and rec["phase"] == "install", rec["notes"]
    assert said in rec["notes"][0] and npmlog.PREFIX in rec["notes"][0]
    assert said in (rec["stderrTail"] or "")


def _project(tmp_path, script: str):
    """A temp npm project depending on a local fixture package whose install script is ``script``."""
    native = tmp_path / "project" / "native"
    native.mkdir(parents=True)
    (native / "package.json").write_text(json.dumps({"name": "native-fixture", "version": "1.0.0",
                                                      "scripts": {"install": script}}))
    (tmp_path / "project" / "package.json").write_text(json.dumps({"name": "p", "version": "1.0.0",
                                                                    "dependencies": {"native-fixture": "file:native"}}))
    return tmp_path / "project"


@pytest.mark.parametrize("said, cause", [
    ("prebuild-install warn install request to https://github.com/example/native/releases/download/v1.0.0/"
     "native-v1.0.0-node-v115-linux-x64.tar.gz failed, reason: getaddrinfo ENOTFOUND github.com", "download-blocked"),
    ("gyp ERR! stack Error: not found: make", None),
])
def test_a_native_install_script_failing_in_silence_is_found_in_the_log(tmp_path, said, cause):
    project = _project(tmp_path, f"node -e \"console.error({json.dumps(said)}); process.exit(1)\"")
    cache = tmp_path / "npm-cache"
    since = time.time()
    done = subprocess.run(["npm", "install", "--loglevel=silent", "--no-audit", "--no-fund", f"--cache={cache}"],
                          cwd=project, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "npm_config_foreground_scripts": "false"})
    assert done.returncode != 0 and not done.stderr.strip()  # npm said nothing
    line = npmlog.decisive(npmlog.read_logs(cache, since))
    assert line is not None and said in line
    found = machine_fault.evidence_and_cause(line)
    assert (found[1] if found else None) == cause


@pytest.mark.parametrize("line", [
    "Error: Provide an access token via --token or set INSTANT_ACCESS_TOKEN",
    "Please set the FIRECRAWL_API_KEY environment variable",
    "NOTION_TOKEN environment variable is required",
    "Error: SLACK_BOT_TOKEN is not set",
    "Configure either BACKLOG_ORG_<NAME>_DOMAIN and BACKLOG_ORG_<NAME>_API_KEY, or both BACKLOG_DOMAIN and "
    "BACKLOG_API_KEY.",
    "Missing API key",
])
def test_credentials_asked_for_in_the_forms_servers_use(line):
    capture = Capture("2025-06-18", phase="initialize", stderr_tail=f"starting\n{line}\n",
                      failure=Failure("exited", "initialize", "the server exited before replying", exit_code=1))
    verdict = classify(Target(name="x", command="x"), capture)
    assert verdict.status == AUTH_REQUIRED and line[:40] in verdict.evidence


@pytest.mark.parametrize("line", [
    "Please set the PORT environment variable", "Set LOG_LEVEL to debug for more output",
    "Provide a path to the database as the first argument", "Setting up the key-value store",
])
def test_lines_that_ask_for_no_credential_are_not_auth_evidence(line):
    assert not credential_request(line)


@pytest.mark.slow
def test_a_log_of_an_earlier_run_is_never_read_however_close_its_time(tmp_path):
    """Two npm runs one right after the other: the second reads its own log, never the first's
    (npm names each run's log anew; a time window alone cannot tell them apart)."""
    cache = tmp_path / "npm-cache"

    def run(said: str) -> str:
        project = _project(tmp_path / said.split()[0], f"node -e \"console.error({json.dumps(said)}); process.exit(1)\"")
        since = (time.time(), npmlog.existing(cache))
        subprocess.run(["npm", "install", "--loglevel=silent", "--no-audit", "--no-fund", f"--cache={cache}"],
                       cwd=project, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "npm_config_foreground_scripts": "false"})
        return npmlog.read_logs(cache, since[0] - 3600, since[1])  # a window wide enough to hold both runs

    first = run("first-failure: the earlier run")
    second = run("second-failure: this run")
    assert "first-failure" in first and "second-failure" in second and "first-failure" not in second


# What npm logged for two real silent installs here (npx, sandboxed, 2026-12-01): a postinstall that
# downloads a browser and a native module's install script, each failing with nothing printed.
MERMAID_LOG = """1344 info run mcp-mermaid@0.4.1 postinstall node_modules/mcp-mermaid playwright install --with-deps chromium
1345 info run mcp-mermaid@0.4.1 postinstall { code: 1, signal: null }
1346 silly unfinished npm timer reify 1796150834199
1356 verbose exit 1
1357 verbose code 1
"""
SQLITE_LOG = """849 info run better-sqlite3@12.11.1 install node_modules/better-sqlite3 prebuild-install || node-gyp rebuild --release
850 info run better-sqlite3@12.11.1 install { code: 1, signal: null }
861 verbose exit 1
"""


@pytest.mark.parametrize("log, said", [
    (MERMAID_LOG, "npm's postinstall script of mcp-mermaid@0.4.1 `playwright install --with-deps chromium` exited 1"),
    (SQLITE_LOG, "npm's install script of better-sqlite3@12.11.1 `prebuild-install || node-gyp rebuild --release` "
                 "exited 1"),
    ("12 info run x@1.0.0 preinstall node_modules/x sh ./fetch.sh\n13 info run x@1.0.0 preinstall "
     "{ code: null, signal: SIGKILL }\n", "npm's preinstall script of x@1.0.0 `sh ./fetch.sh` was killed by SIGKILL"),
    ("12 info run x@1.0.0 install node_modules/x node ok.js\n13 info run x@1.0.0 install { code: 0, signal: null }\n"
     "14 verbose exit 1\n", None),
])
def test_a_silent_install_names_the_script_that_failed(log, said):
    assert npmlog.decisive(log) == said


@pytest.mark.slow
def test_a_real_install_script_failing_without_a_word_is_named(tmp_path):
    project = _project(tmp_path, "node -e \"process.exit(3)\"")
    cache = tmp_path / "npm-cache"
    since = time.time()
    done = subprocess.run(["npm", "install", "--loglevel=silent", "--no-audit", "--no-fund", f"--cache={cache}"],
                          cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and not done.stderr.strip()
    line = npmlog.decisive(npmlog.read_logs(cache, since))
    assert line is not None and "native-fixture@1.0.0" in line and "exit" in line, line


# npm's log of an install cut off at its bound while it retried a git dependency's tarball (the
# neon entry here, 2026-12-01: @sentry/node depends on a codeload.github.com tarball).
RETRYING_LOG = """987 silly placeDep ROOT dset@3.1.4 OK for: @segment/analytics-core@1.8.1 want: ^3.1.4
988 silly fetch manifest @fastify/otel@https://codeload.github.com/getsentry/fastify-otel/tar.gz/ae3088d65e286bdc
989 http fetch GET https://codeload.github.com/getsentry/fastify-otel/tar.gz/ae3088d65e286bdc attempt 1 failed with ENOTFOUND
990 http fetch GET https://codeload.github.com/getsentry/fastify-otel/tar.gz/ae3088d65e286bdc attempt 2 failed with ENOTFOUND
"""


@pytest.mark.parametrize("log, cause", [
    (RETRYING_LOG, "dns"),
    (RETRYING_LOG.replace("codeload.github.com", "registry.npmjs.invalid").replace("ENOTFOUND", "EAI_AGAIN"), None),
    (RETRYING_LOG.replace("ENOTFOUND", "ECONNRESET").replace("codeload.github.com", "registry.npmjs.org"), None),
])
def test_an_install_cut_off_while_npm_retried_a_fetch_says_so(log, cause):
    # a host an install reaches that does not resolve here is the machine's; any other host, or a reset
    # from the registry this machine reaches (the tests install from it), is not
    line = npmlog.decisive(log)
    timeout = Capture("1", phase="install", stderr_tail=f"{npmlog.PREFIX}{line}\n" if line else "",
                      failure=Failure("timeout", "install", "the install did not finish within 300 s"))
    verdict = classify(Target(name="t", command="npx -y x@1.0.0"), timeout)
    if cause is None:
        assert verdict.status == "timeout" and verdict.environment is None, verdict
    else:
        assert verdict.status == "not-measured-here" and verdict.cause == cause, verdict
        assert "codeload.github.com" in verdict.environment
