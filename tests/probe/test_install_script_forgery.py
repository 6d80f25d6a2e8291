"""An install script is the package's own code and can print anything, npm's words included. npm
fetches every package of an install before it starts any install script (and prints that script's
banner, ``> pkg@1.0.0 postinstall``, on its stdout first); uv's build backend builds what uv fetched.
So registry failures printed in an install that had started a package's code are the package's
words: the install is the package's ``startup-failure``, never ``not-measured-here``, whether the
script then exits, hangs to the bound, or kills npm. Without such a banner the same lines are npm's
and stay the machine's; a script's own blocked download stays the machine's."""

from __future__ import annotations

import json
import os
import asyncio

import pytest

from harness.probe import install as installing
from harness.probe import machine_fault, resolve
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target

TARGET = Target(name="forger", command="npx -y forger-server@1.0.0")
BANNER = "> forger-server@1.0.0 postinstall\n"
UV_BUILD = ("  × Failed to build `forger==1.0.0`\n  ├─▶ The build backend returned an error\n"
            "  ╰─▶ Call to `setuptools.build_meta.build_wheel` failed (exit status: 1)\n      [stderr]\n")
FORGED = [
    "npm error code ERR_SOCKET_TIMEOUT\nnpm error network Socket timeout  request to https://registry.npmjs.org/x failed\n",
    "npm error code ECONNRESET\nnpm error network request to https://registry.npmjs.org/x failed, reason: socket hang up\n",
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY request to https://registry.npmjs.org/x failed\n",
    "error: Failed to fetch: `https://pypi.org/simple/x/`\n  Caused by: invalid peer certificate: UnknownIssuer\n",
]


def _capture(tail: str, kind: str = "exited") -> Capture:
    detail = "the install failed before any launch" if kind == "exited" else "the install did not finish within 300 s"
    return Capture("1.0.0", phase="install", stderr_tail=tail, exit_code=1 if kind == "exited" else None,
                   failure=Failure(kind, "install", detail, exit_code=1 if kind == "exited" else None))


@pytest.mark.parametrize("kind", ["exited", "timeout"])
@pytest.mark.parametrize("forged", FORGED)
@pytest.mark.parametrize("ran", [BANNER, UV_BUILD], ids=["npm-script", "uv-build"])
def test_registry_words_after_the_package_s_code_ran_are_the_package_s(forged, ran, kind):
    verdict = st.classify(TARGET, _capture(ran + forged, kind))
    assert verdict.status == (st.STARTUP_FAILURE if kind == "exited" else st.TIMEOUT), verdict
    assert verdict.environment is None


@pytest.mark.parametrize("forged", FORGED[2:])
def test_the_same_words_from_an_install_that_ran_no_package_code_stay_the_machine_s(forged):
    verdict = st.classify(TARGET, _capture(forged))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.REGISTRY, verdict


def test_a_script_s_own_download_that_does_not_resolve_stays_the_machine_s(monkeypatch):
    monkeypatch.setenv(machine_fault.DNS_CONTROL_VARIABLE, "control-a.invalid")
    tail = BANNER + "prebuild-install warn install getaddrinfo ENOTFOUND downloads.mcp-context-cost-no-such-4e1b.com\n"
    verdict = st.classify(TARGET, _capture(tail))
    assert verdict.status == st.NOT_MEASURED_HERE and verdict.cause == machine_fault.DOWNLOAD_BLOCKED, verdict


FORGE = ("echo 'npm error code ERR_SOCKET_TIMEOUT' >&2; "
         "echo 'npm error network Socket timeout  request to https://registry.npmjs.org/forger failed' >&2; ")


@pytest.mark.slow
@pytest.mark.parametrize("ending, bound", [("exit 1", 120), ("sleep 60", 8), ("kill -9 $PPID; sleep 1", 120)],
                         ids=["exits", "hangs", "kills-npm"])
def test_a_real_npm_install_whose_script_forges_a_registry_failure_is_the_package_s(tmp_path, monkeypatch, ending,
                                                                                   bound):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "harness-cache"))
    package = tmp_path / "project" / "dep"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "forger-server", "version": "1.0.0",
                                                      "scripts": {"postinstall": FORGE + ending}}))
    (tmp_path / "project" / "package.json").write_text(json.dumps({"name": "p", "version": "1.0.0",
                                                                   "dependencies": {"forger-server": "file:dep"}}))
    script = (f"cd {tmp_path / 'project'} && exec npm install --no-audit --no-fund --install-links "
              f"--cache={tmp_path / 'npm-cache'}")
    env = {**os.environ, resolve.FOREGROUND_SCRIPTS: "true"}
    _, ran = asyncio.run(resolve._run(TARGET, ["sh", "-c", script], env, "host", bound))
    assert ran.exit_code != 0 and ran.scripts == ("> forger-server@1.0.0 postinstall",), ran
    capture = installing._failed(ran, None, (0.0, frozenset()), "1.0.0", bound)
    verdict = st.classify(TARGET, capture)
    assert verdict.status in (st.STARTUP_FAILURE, st.TIMEOUT) and verdict.environment is None, verdict
