"""A harness that dies (SIGKILL, or exits without tearing down) leaves none of its launches' processes
behind, even those no parent-death signal reaches (the sentinel in ``harness.probe.reaper``: bubblewrap's
cloned child killed before it armed ``--die-with-parent``). Each variant starts a process the launch's own death signal does not cover:
a grandchild in the launch's group, and escapees that leave the group (``setpgid``, ``setsid``, a
``setsid`` fork loop)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO

SERVERS = REPO / "tests" / "fixtures" / "servers"

# A harness reduced to one launch: spawn the fixture through ``process.spawn``, say so, then either
# wait to be killed or exit at once without ending it.
DRIVER = r"""
import asyncio, os, sys
from harness.probe import process
async def main():
    proc = await process.spawn(sys.argv[2:], dict(os.environ), os.getcwd(), 1 << 16)
    print(proc.pid, flush=True)
    if sys.argv[1] == "exit":
        await asyncio.sleep(1.0)  # let the fixture start what it starts
        os._exit(3)  # no teardown: as a crash between launch and teardown would
    await asyncio.sleep(600)
asyncio.run(main())
"""


def _marked(marker: str) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.add(int(entry))
        except OSError:
            continue
    return found


def _wait_for(predicate, seconds: float) -> bool:
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("ending", ["sigkill", "exit"])
@pytest.mark.parametrize("fixture", [
    ["forks_grandchild.py", "--pidfile", "{tmp}/pid"],           # stays in the launch's group
    ["escapes_teardown.py", "--marker", "{marker}", "--how", "setpgid"],
    ["escapes_teardown.py", "--marker", "{marker}", "--how", "setsid"],
    ["escapes_teardown.py", "--marker", "{marker}", "--how", "fork-loop"],
])
@pytest.mark.slow
def test_a_dead_harness_leaves_no_launched_process(tmp_path, fixture, ending):
    marker = f"sentinel-{uuid.uuid4().hex}"
    argv = [sys.executable, str(SERVERS / fixture[0]),
            *(a.format(tmp=tmp_path, marker=marker) for a in fixture[1:])]
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, ending, *argv], cwd=REPO, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True, text=True)
    left: set[int] = set()
    try:
        int(driver.stdout.readline())  # the launch has started
        if fixture[0] == "forks_grandchild.py":
            watched = lambda: _grandchild(tmp_path / "pid")  # noqa: E731
        else:
            watched = lambda: _marked(marker)  # noqa: E731
        assert _wait_for(watched, 15), "the fixture never started its extra process"
        left = set(watched())
        if ending == "sigkill":
            os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(15)
        gone = _wait_for(lambda: not {p for p in watched() | left if _alive(p)}, 15)
        assert gone, f"processes left behind: {sorted(p for p in watched() | left if _alive(p))}"
    finally:
        try:
            os.killpg(driver.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        driver.wait(15)
        _kill_all(left | _marked(marker))


def _grandchild(pidfile: Path) -> set[int]:
    try:
        return {int(pidfile.read_text())}
    except (OSError, ValueError):
        return set()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
