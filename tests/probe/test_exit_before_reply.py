"""A server that exits before replying, and the install that leaves one behind: the status and the
quoted evidence come from the real cause. What a server printed on stdout before exiting is quoted
(and read for a credential request) when stderr says nothing; an install that could not write its
files for want of disk space — npm only warns (``TAR_ENTRY_ERROR ENOSPC``) and goes on, leaving an
empty executable that runs as an empty shell script and exits 0 — is never trusted, and its record is
the machine's (``not-measured-here``, ``disk-full``), whatever else the install warned about."""

from __future__ import annotations

import pytest

from harness.probe import npx_cache
from harness.probe import build_record, machine_fault, resolve, sandbox
from harness.probe import install as installing
from harness.probe.measure import measure_sync
from harness.probe.outcome import Capture, Failure
from harness.probe.status import classify
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401


def _fixture(mode: str) -> Target:
    return Target(name=f"exits-{mode}", command=fixture_command("exits_before_reply", mode), timeout_seconds=5)


@pytest.mark.parametrize("mode, status, said", [
    ("stdout-usage", "startup-failure",
     "it printed on stdout: 'fixture-server: error: the following arguments are required: --root'"),
    ("stdout-credential", "auth-required",
     "it said: 'Please set the EXAMPLE_API_KEY environment variable to use this server'"),
    ("stderr-usage", "startup-failure",
     "stderr ends: 'fixture-server: error: the following arguments are required: --root'"),
])
def test_what_a_server_said_before_exiting_with_code_0_is_the_evidence(mode, status, said, results_root):
    run = measure_and_write(_fixture(mode), results_root, dual=False)
    assert run.record["status"] == status, run.notes
    assert "exit code 0" in run.record["notes"][0] and said in run.record["notes"][0], run.notes
    assert "environmentCause" not in run.record


def test_a_silent_exit_with_code_0_quotes_nothing_it_did_not_say(results_root):
    run = measure_and_write(_fixture("silent"), results_root, dual=False)
    assert run.record["status"] == "startup-failure", run.notes
    assert run.record["notes"][0] == "the server exited before replying (phase: initialize, exit code 0)"
    assert "environmentCause" not in run.record


def _install_capture(tail: str, exit_code: int = 0) -> Capture:
    failure = Failure("exited", "install", "the install could not write all its files", exit_code=exit_code)
    return Capture("2025-06-18", phase="install", stderr_tail=tail, exit_code=exit_code, failure=failure)


MAPBOX_TAIL = """npm warn EBADENGINE Unsupported engine {
npm warn EBADENGINE   package: '@mapbox/mcp-devkit-server@0.8.2',
npm warn EBADENGINE   required: { node: '>=22' },
npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }
npm warn EBADENGINE }
npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write
npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write
npm error A complete log of this run can be found in: /home/mcp/.npm/_logs/<time>-debug-0.log
npm's log: npm EBADENGINE: @mapbox/mcp-devkit-server@0.8.2 requires node >=22; this machine has v20.20.2
"""


@pytest.mark.parametrize("tail, exit_code, line", [
    ("npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write\n", 0,
     "npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write"),
    (MAPBOX_TAIL, 1, "npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write"),  # not the engine
    ("  × Failed to install: pydantic_core-2.33.2-cp311-cp311-manylinux_2_17_x86_64.whl\n"
     "  ╰─▶ failed to write to file `/home/mcp/.cache/uv/x/pydantic_core/_pydantic_core.so`: No space left on "
     "device (os error 28)\n", 2, "device (os error 28)"),
    ("ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n", 1,
     "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device"),
    ("npm error code EDQUOT\nnpm error syscall write\nnpm error EDQUOT: disk quota exceeded, write\n", 1,
     "npm error code EDQUOT"),
])
def test_an_install_out_of_disk_space_is_the_machine_s(tail, exit_code, line):
    verdict = classify(Target(name="x", command="npx -y x@1.0.0"), _install_capture(tail, exit_code))
    assert verdict.status == "not-measured-here" and verdict.cause == machine_fault.DISK_FULL, verdict
    assert verdict.environment is not None and verdict.environment.endswith(line)
    assert "the measuring machine's disk, which had no space left" in verdict.evidence


@pytest.mark.parametrize("tail", [
    "Error: ENOSPC: System limit for number of file watchers reached, watch '/work'\n",  # inotify, not disk
    "Error: ENOSPC: no space left on device, write\n",  # the server's own words, from the install's launch
])
def test_a_server_saying_enospc_from_its_own_launch_is_no_disk_evidence(tail):
    resolved = resolve.Resolved("npx", "x", "1.0.0", ("node", "/x/bin/x"), "sandbox", "/x/node_modules/.bin")
    target = Target(name="x", command="npx -y x@1.0.0", resolved=resolved)
    failure = Failure("exited", "initialize", "the server exited before replying", exit_code=1)
    verdict = classify(target, Capture("2025-06-18", phase="initialize", stderr_tail=tail, exit_code=1,
                                       failure=failure))
    assert verdict.status == "startup-failure" and verdict.cause is None, verdict


def _install_dir(cache_root, name: str, command: str):
    npm = sandbox.server_cache(name, command) / "npm"
    bin_dir = npm / "_npx" / "0123456789abcdef" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir.parent / "x").mkdir()
    (bin_dir.parent / "x" / "server").write_bytes(b"")  # what tar left of the executable: nothing
    return bin_dir.parent.parent


@pytest.mark.parametrize("runs, status", [
    (["ENOSPC", "ENOSPC"], "not-measured-here"),  # out of space twice: the machine's, never launched
    (["ENOSPC", "ok"], None),  # space came back: the second install is the install
])
def test_an_install_npm_called_successful_while_out_of_space_is_never_trusted(runs, status, tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    name, command = "x", "npx -y x@1.0.0"
    seen = []

    async def fake_resolution(target, isolation, **kwargs):
        installed = _install_dir(tmp_path, name, command) if not seen else \
            sandbox.server_cache(name, command) / "npm" / "_npx" / "0123456789abcdef"
        installed.mkdir(parents=True, exist_ok=True)
        (installed / "package.json").write_text("{}")
        (installed / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
        outcome = runs[len(seen)]
        seen.append(installed)
        stderr = b"npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write\n" if outcome == "ENOSPC" else b""
        executable = f"{sandbox.SANDBOX_HOME}/.npm/_npx/0123456789abcdef/node_modules/.bin"
        found = resolve.Resolved("npx", "x", "1.0.0", ("node", "/x"), "sandbox", executable)
        return found, resolve.Ran(0, False, stderr, 0.5)

    monkeypatch.setattr(resolve, "run_resolution", fake_resolution)
    import asyncio

    done = asyncio.run(installing.install(Target(name=name, command=command, timeout_seconds=5), "sandbox"))
    assert len(seen) == 2
    if status is None:
        assert not done.failures and done.target.resolved is not None
        assert npx_cache.marked_complete(seen[-1])
        return
    assert done.target.resolved is None and len(done.failures) == 2
    assert not seen[0].exists()  # what the full disk left is gone, not kept for a later run
    rec = build_record.build(measure_sync(Target(name=name, command=command, timeout_seconds=5), isolation="sandbox",
                                          installed=done, dual=False))
    assert rec["status"] == status and rec["environmentCause"] == "disk-full", rec["notes"]
    assert [a["role"] for a in rec["attempts"]] == ["install", "install"]
    assert "the install could not write all its files (phase: install, exit code 0)" in rec["notes"][0]
    assert rec["environmentEvidence"] == "npm warn tar TAR_ENTRY_ERROR ENOSPC: no space left on device, write"
