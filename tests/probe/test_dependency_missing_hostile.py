"""npm's 404 or notarget words that are not a registry lacking a dependency stay the server's: an alias
(``name@npm:other@1``) whose target is missing is the server's own package missing; a package's own install
script printing npm's 404 words is its own code's; the same words from a launch are the server's. Real npm
installs from a small local registry (tests/probe/test_dependency_missing's)."""

from __future__ import annotations

import pytest

from harness.probe import machine_fault
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401
from tests.probe.test_dependency_missing import Registry, tarball

FAKE_404 = ("console.error('npm error 404 Not Found - GET https://registry.npmjs.org/left-pad');"
            "console.error(\"npm error 404  'left-pad@^1.0.0' is not in this registry.\");process.exit(1)\n")


@pytest.fixture
def registry(monkeypatch, tmp_path):
    reg = Registry({"fine-mcp": {}, "script-mcp": {}})
    reg.tarballs["script-mcp"] = tarball("script-mcp", {}, scripts={"postinstall": "node fake.js"},
                                         files={"fake.js": FAKE_404.encode()})
    monkeypatch.setenv("npm_config_registry", reg.url)
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    yield reg
    reg.server.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["fine-mcp@npm:gone-mcp@1.0.0", "script-mcp@1.0.0"])
def test_npm_s_404_words_that_are_no_missing_dependency(registry, results_root, spec):  # noqa: F811
    run = measure_and_write(Target(name="dep", command=f"npx -y {spec}", timeout_seconds=30), results_root,
                            isolation="host")
    rec = run.record
    assert rec["status"] == st.STARTUP_FAILURE and rec.get("environmentCause") is None, run.notes


def _capture(tail: str, phase: str) -> Capture:
    return Capture("1.0.0", phase=phase, stderr_tail=tail, exit_code=1,
                   failure=Failure("exited", phase, "the server exited before replying", exit_code=1))


ALIAS_404 = "npm error 404  The requested resource 'gone-mcp@1.0.0' could not be found\n"


def test_an_alias_s_missing_target_is_the_server_s_own():
    target = Target(name="x", command="npx -y fine-mcp@npm:gone-mcp@1.0.0")
    verdict = st.classify(target, _capture(ALIAS_404, "install"))
    assert verdict.status == st.STARTUP_FAILURE and verdict.cause is None, verdict
    # without the alias the same words name a dependency: the registry's
    verdict = st.classify(Target(name="x", command="npx -y fine-mcp@1.0.0"), _capture(ALIAS_404, "install"))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.REGISTRY, verdict


def test_the_words_from_a_launch_are_the_server_s():
    target = Target(name="x", command="npx -y fine-mcp@1.0.0")
    tail = "npm error 404 Not Found - GET https://registry.npmjs.org/left-pad\n"
    assert st.classify(target, _capture(tail, "initialize")).status == st.STARTUP_FAILURE


def test_a_dependency_named_as_the_server_is_the_server_s():
    tail = "npm error notarget No matching version found for fine-mcp@^2.0.0.\n"
    verdict = st.classify(Target(name="x", command="npx -y fine-mcp@1.0.0"), _capture(tail, "install"))
    assert verdict.status == st.STARTUP_FAILURE, verdict
