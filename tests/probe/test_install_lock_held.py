"""A cache whose install lock another process of this machine holds for the install's whole bound:
the server was never tried, so the record is ``not-measured-here`` (``environmentCause``
``cache-locked``), never the server's ``timeout``; and what the holder is installing in that cache
is left alone (the loser of the lock discards nothing). A real ``flock`` process holds the lock."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from harness.probe import npx_cache
from harness.probe import sandbox
from harness.probe import install as installing
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401

MEMORY = "npx -y @modelcontextprotocol/server-memory@2026.8.31"


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["sandbox", "host"])
def test_a_lock_held_throughout_is_the_machine_s_and_the_holder_s_install_is_kept(results_root, tmp_path,  # noqa: F811
                                                                                   monkeypatch, isolation):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "harness-cache"))
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv(installing.INSTALL_VARIABLE, "3")
    target = Target(name="memory", command=MEMORY, timeout_seconds=30)
    lock = installing._lock_path(target, isolation)
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(["flock", str(lock), "sleep", "120"], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not _held(lock) and time.monotonic() < deadline:
            time.sleep(0.1)
        npm_cache = tmp_path / "npm-cache" if isolation == "host" else sandbox.server_cache("memory", MEMORY) / "npm"
        underway = npm_cache / "_npx" / "0123456789abcdef"  # the holder's install, half written
        (underway / "node_modules").mkdir(parents=True)
        run = measure_and_write(target, results_root, isolation=isolation, pass_declared_values=False)
        rec = run.record
        assert rec["status"] == "not-measured-here", rec["notes"]
        assert rec["environmentCause"] == "cache-locked" and rec["phase"] == "install"
        assert "held its cache for the whole 3 s bound" in rec["environmentEvidence"]
        assert (underway / "node_modules").is_dir()
        assert npx_cache.MARKER not in os.listdir(underway)
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()


def _held(path) -> bool:
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:  # the holder has not created it yet
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
