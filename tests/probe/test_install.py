"""Installing is not measuring: an npx/uvx package is installed once, under its own bound, before
any launch is timed; nothing an interrupted or failed install leaves is trusted by a later run;
two measurements never race on one cache.

Real npm, a real pinned package, real SIGKILLs of the harness while npm installs (watched for in
the cache, not guessed from the clock), and the states npm really leaves: ``node_modules`` without
``package.json``, and its ``concurrency.lock`` directory, which makes every later ``npx`` wait a
minute before it treats it as stale.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.probe import npx_cache
from harness.probe import build_record
from harness.probe import install as installing
from harness.probe.measure import measure, measure_sync
from harness.probe.target import Target
from tests.conftest import REPO

SPEC = "@modelcontextprotocol/server-memory@2026.8.31"  # as in tests/probe/test_real_servers.py
MEMORY = f"npx -y {SPEC}"
NPX_HASH = hashlib.sha512(SPEC.encode()).hexdigest()[:16]  # libnpmexec's install directory for this one spec


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A cold harness cache for the sandbox (each server's npm cache lives in it)."""
    root = tmp_path / "harness-cache"
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(root))
    return root


def _npx_dir(cache: Path, name: str) -> Path:
    from harness.probe import sandbox

    return sandbox.server_cache(name, MEMORY) / "npm" / "_npx" / NPX_HASH


def _measured(name: str, **kwargs) -> dict:
    rec = build_record.build(measure_sync(Target(name=name, command=MEMORY, timeout_seconds=60), isolation="sandbox",
                                    pass_declared_values=False, **kwargs))
    assert rec["status"] == "measured", rec["notes"]
    assert rec["resolvedPackage"] == {"launcher": "npx", "name": "@modelcontextprotocol/server-memory",
                                      "version": "2026.8.31"}
    assert all(a["role"] in ("first", "confirmation") for a in rec["attempts"]) and rec["confirmed"] is True
    return rec


def _harness_killed_when(cache: Path, name: str, ready, tmp_path: Path) -> None:
    """Start ``measure`` of the memory server in a child harness, SIGKILL it once ``ready(npx_dir)``
    holds (polling; at most 180 s), then wait until npm inside has died too (its lock untouched)."""
    env = {**os.environ, "MCP_CONTEXT_COST_CACHE": str(cache), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "measure", "--command", MEMORY, "--name", name,
                             "--isolation", "sandbox", "--out", str(tmp_path / f"out-{name}")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    directory = _npx_dir(cache, name)
    try:
        deadline = time.monotonic() + 180
        while not ready(directory):
            assert proc.poll() is None, "the harness ended before the state to kill it in was reached"
            assert time.monotonic() < deadline, "the state to kill the install in was never reached"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    lock = directory / npx_cache.NPM_LOCK
    deadline = time.monotonic() + 30
    while lock.exists() and time.time() - lock.stat().st_mtime < 2.5 and time.monotonic() < deadline:
        time.sleep(0.2)  # npm (killed with its parent) no longer touches its lock


def _started(directory: Path) -> bool:
    return (directory / npx_cache.NPM_LOCK).exists()


def _half_installed(directory: Path) -> bool:
    modules = directory / "node_modules"
    return modules.is_dir() and len(list(modules.iterdir())) >= 20 and not (directory / "package.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("point", [_started, _half_installed], ids=["npm-started", "half-installed"])
def test_a_harness_killed_during_the_install_leaves_nothing_a_later_run_trusts(cache, tmp_path, point):
    _harness_killed_when(cache, "memory", point, tmp_path)
    directory = _npx_dir(cache, "memory")
    if point is _half_installed:  # the poisoned state: every later npx run would start from it
        assert not (directory / "package.json").exists() and (directory / "node_modules").is_dir()
        assert npx_cache.incomplete_npx_installs(directory.parent.parent, exclusive=True)

    rec = _measured("memory")
    assert (directory / npx_cache.MARKER).is_file() and (directory / "package.json").is_file()
    assert rec["canonicalSha256"] == _measured("memory")["canonicalSha256"]  # the warm cache measures the same


@pytest.mark.slow
def test_a_stale_npm_lock_and_a_leftover_install_lock_do_not_hold_the_next_run(cache, monkeypatch):
    # npx waits 60 s on a lock nobody holds; the bound here is below that, so only discarding it passes
    monkeypatch.setenv(installing.INSTALL_VARIABLE, "45")
    directory = _npx_dir(cache, "memory")
    (directory / npx_cache.NPM_LOCK).mkdir(parents=True)
    old = time.time() - 30
    os.utime(directory / npx_cache.NPM_LOCK, (old, old))
    lock_file = installing._lock_path(Target(name="memory", command=MEMORY), "sandbox")
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    lock_file.write_text("12345\n")  # a leftover lock file of a killed harness holds no lock
    rec = _measured("memory")
    assert rec["status"] == "measured" and (directory / npx_cache.MARKER).is_file()


@pytest.mark.slow
def test_an_install_ended_by_its_own_bound_is_a_timeout_of_the_install_and_is_not_trusted(cache, monkeypatch):
    monkeypatch.setenv(installing.INSTALL_VARIABLE, "0.3")  # far below any install, even from a warm npm cache
    rec = build_record.build(measure_sync(Target(name="memory", command=MEMORY, timeout_seconds=60), isolation="sandbox",
                                    pass_declared_values=False))
    assert rec["status"] == "timeout", rec["notes"]
    assert rec["phase"] == "install" and [a["role"] for a in rec["attempts"]] == ["install"]
    assert "the install did not finish within 0.3 s" in rec["notes"][0]
    assert rec["timeoutMs"] == 300
    assert not npx_cache.incomplete_npx_installs(_npx_dir(cache, "memory").parent.parent, exclusive=True)
    monkeypatch.delenv(installing.INSTALL_VARIABLE)
    _measured("memory")


@pytest.mark.slow
def test_two_measurements_of_one_server_at_once_install_once_and_both_measure(cache):
    async def both():
        target = Target(name="memory", command=MEMORY, timeout_seconds=60)
        return await asyncio.gather(*(measure(target, isolation="sandbox", pass_declared_values=False)
                                      for _ in range(2)))

    first, second = (build_record.build(m) for m in asyncio.run(both()))
    assert first["status"] == second["status"] == "measured", (first["notes"], second["notes"])
    assert first["canonicalSha256"] == second["canonicalSha256"]
    assert sorted(p.name for p in _npx_dir(cache, "memory").parent.iterdir()) == [NPX_HASH]


def test_what_a_cache_holds_is_judged_by_what_npm_writes_last(tmp_path):
    npx = tmp_path / "npm" / "_npx"
    complete, half, missing, foreign, busy = (npx / name for name in ("a1", "b2", "c3", "d4", "e5"))
    for directory in (complete, missing, foreign):
        (directory / "node_modules" / "dep").mkdir(parents=True)
        (directory / "node_modules" / "dep" / "package.json").write_text("{}")
        (directory / "package.json").write_text('{"dependencies": {"dep": "1.0.0"}}')
    (complete / npx_cache.MARKER).write_text(npx_cache.MARKER_TEXT)
    (half / "node_modules" / "dep").mkdir(parents=True)
    (missing / "package.json").write_text('{"dependencies": {"dep": "1.0.0", "gone": "2.0.0"}}')
    (busy / "node_modules").mkdir(parents=True)
    (busy / npx_cache.NPM_LOCK).mkdir()  # touched just now: an install under way is never touched
    found = dict((p.name, why) for p, why in npx_cache.incomplete_npx_installs(tmp_path / "npm"))
    assert found == {"b2": "an install that never completed (node_modules without package.json)",
                     "c3": "an install missing gone"}
    strict = dict((p.name, why) for p, why in npx_cache.incomplete_npx_installs(tmp_path / "npm", exclusive=True))
    assert strict["d4"] == "an install the harness never saw complete" and "a1" not in strict
    notes = npx_cache.discard_incomplete(tmp_path / "npm")
    assert len(notes) == 2 and not half.exists() and not missing.exists() and complete.is_dir() and busy.is_dir()


def test_an_install_that_succeeds_on_its_second_run_is_an_install(monkeypatch, tmp_path):
    """The first run's failure (a reset connection) is retried; the second run's install is used
    and the first failure is no evidence of anything (the runs are stood in for: a registry that
    resets once and then answers is not something a test can order)."""
    from harness.probe import resolve

    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm"))
    found = resolve.Resolved("npx", "@modelcontextprotocol/server-memory", "2026.8.31", ("sh", "-c", "x"), "host",
                             str(tmp_path / "bin"))
    runs = iter([(None, resolve.Ran(1, False, b"npm error code ECONNRESET\n", 1.0)),
                 (found, resolve.Ran(0, False, b"", 1.0))])

    async def run_resolution(*args, **kwargs):
        return next(runs)

    monkeypatch.setattr(resolve, "run_resolution", run_resolution)
    got = asyncio.run(installing.install(Target(name="memory", command=MEMORY), "host"))
    assert got.failures == () and got.target.resolved is found


def test_a_missing_module_in_an_install_seen_complete_is_the_package_s_own(tmp_path):
    """A retry heals an npx install a missing module shows to be corrupt — unless the harness saw
    that install complete: then the module is missing from the package itself (a dependency
    released without the path it imports) and the install is kept, so the retry starts from it."""
    npm = tmp_path / ".npm"
    marked, unmarked = npm / "_npx" / "0123456789abcdef", npm / "_npx" / "fedcba9876543210"
    for directory in (marked, unmarked):
        (directory / "node_modules").mkdir(parents=True)
    (marked / npx_cache.MARKER).write_text(npx_cache.MARKER_TEXT)
    tail = "\n".join(f"Error: Cannot find module '{d}/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp'"
                     for d in (marked, unmarked))
    note = npx_cache.before_retry(tail, "host")
    assert marked.is_dir() and not unmarked.exists()
    assert note is not None and unmarked.name in note and marked.name not in note


def _complete_install(directory: Path) -> None:
    (directory / "node_modules" / "dep").mkdir(parents=True)
    (directory / "node_modules" / "dep" / "package.json").write_text("{}")
    (directory / "package.json").write_text('{"dependencies": {"dep": "1.0.0"}}')


def _plant_marker(directory: Path, how: str) -> None:
    marker = directory / npx_cache.MARKER
    if how == "directory":
        marker.mkdir()
    elif how == "link-to-current":
        (directory.parent / "elsewhere").write_text(npx_cache.MARKER_TEXT)
        marker.symlink_to(directory.parent / "elsewhere")
    elif how == "current-then-more":
        marker.write_text(npx_cache.MARKER_TEXT + "x" * 10_000)
    else:
        marker.write_text(how)


OTHER_PROCEDURES = ["complete\n", "", f"complete by install procedure {npx_cache.PROCEDURE + 1}\n",
                    f"complete by install procedure {npx_cache.PROCEDURE - 1}\n", "\x00\xff garbage",
                    "directory", "link-to-current", "current-then-more"]


@pytest.mark.parametrize("marker", OTHER_PROCEDURES)
@pytest.mark.parametrize("exclusive", [True, False], ids=["sandbox", "host"])
def test_an_install_another_install_procedure_marked_is_never_trusted(tmp_path, marker, exclusive):
    """An earlier procedure's mark (the plain "complete" of one whose dependencies' install scripts never
    ran), a later or unknown one's, or anything but this procedure's own plain file: discarded, in the
    sandbox's cache and the host's alike, and never kept as "seen complete" when a retry heals."""
    directory = tmp_path / "npm" / "_npx" / "0123456789abcdef"
    _complete_install(directory)
    _plant_marker(directory, marker)
    found = dict((p.name, why) for p, why in npx_cache.incomplete_npx_installs(tmp_path / "npm", exclusive))
    assert found == {directory.name: "an install made by another install procedure"}
    assert not npx_cache.marked_complete(directory)
    notes = npx_cache.discard_incomplete(tmp_path / "npm", exclusive)
    assert notes == [f"discarded an install made by another install procedure, {directory.name} from the package "
                     "cache before installing"] and not directory.exists()


@pytest.mark.parametrize("exclusive", [True, False], ids=["sandbox", "host"])
def test_this_procedure_s_mark_is_trusted_and_an_unmarked_install_only_on_the_host(tmp_path, exclusive):
    current, unmarked = tmp_path / "npm" / "_npx" / "a1", tmp_path / "npm" / "_npx" / "b2"
    for directory in (current, unmarked):
        _complete_install(directory)
    (current / npx_cache.MARKER).write_text(npx_cache.MARKER_TEXT)
    found = dict((p.name, why) for p, why in npx_cache.incomplete_npx_installs(tmp_path / "npm", exclusive))
    assert found == ({"b2": "an install the harness never saw complete"} if exclusive else {})
    assert npx_cache.marked_complete(current) and not npx_cache.marked_complete(unmarked)


def test_the_mark_written_is_this_procedure_s(tmp_path):
    directory = tmp_path / "npm" / "_npx" / "0123456789abcdef"
    _complete_install(directory)
    (directory / npx_cache.MARKER).write_text("complete\n")
    npx_cache.mark_complete(str(directory / "node_modules" / ".bin"), "host", tmp_path / "npm")
    assert (directory / npx_cache.MARKER).read_text() == npx_cache.MARKER_TEXT
    assert str(npx_cache.PROCEDURE) in npx_cache.MARKER_TEXT


@pytest.mark.slow
@pytest.mark.parametrize("marker", ["complete\n", None, f"complete by install procedure {npx_cache.PROCEDURE + 1}\n"],
                         ids=["earlier", "none", "later"])
def test_a_real_install_an_earlier_or_unknown_procedure_left_is_installed_again(cache, marker):
    """A real sandboxed install whose mark is not this procedure's is made again before the launch: what
    was planted in it is gone, the new install carries this procedure's mark, and the measurement is the
    same as from a fresh cache."""
    first = _measured("memory")
    directory = _npx_dir(cache, "memory")
    if marker is None:
        (directory / npx_cache.MARKER).unlink()
    else:
        (directory / npx_cache.MARKER).write_text(marker)
    planted = directory / "node_modules" / "planted-by-an-old-procedure"
    planted.mkdir()
    again = _measured("memory")
    assert not planted.exists()
    assert (directory / npx_cache.MARKER).read_text() == npx_cache.MARKER_TEXT
    assert again["canonicalSha256"] == first["canonicalSha256"]
