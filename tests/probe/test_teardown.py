"""No process a measurement starts outlives it, in any isolation and tracking mode.

The fixture ``escapes_teardown.py`` leaves an "escapee" behind by every route out of the process
group and out of the server's tree: a double fork whose intermediate exits at once (re-parenting
the escapee away from the server), ``setsid`` or ``setpgid``, SIGTERM/SIGHUP ignored, stdio
detached, optionally a fork loop of more setsid children or an environment scrubbed of every
variable. Each escapee carries a unique marker in its command line; afterwards no live process in
``/proc`` may carry it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

import pytest

from harness.probe import reaper
from harness.probe.measure import measure_sync
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.probe.helpers import nothing_left, results_root  # noqa: F401


def with_marker(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and reaper.alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def left_after(seconds: float, marker: str) -> list[int]:
    """Processes still carrying ``marker`` after up to ``seconds`` (the kernel reaps asynchronously)."""
    ends = time.monotonic() + seconds
    while (left := with_marker(marker)) and time.monotonic() < ends:
        time.sleep(0.05)
    return left


def cgroup_available() -> bool:
    tracker = reaper.Tracker(use_cgroup=True)
    mode = tracker.mode
    tracker.discard()
    return mode == "cgroup"


ISOLATIONS = ["host"] + (["sandbox"] if shutil.which("bwrap") else [])
TRACKING = ["proc"] + (["cgroup"] if cgroup_available() else [])


@pytest.fixture(params=TRACKING)
def tracking(request, monkeypatch) -> str:
    monkeypatch.setenv(reaper.MODE_VARIABLE, "proc" if request.param == "proc" else "auto")
    return request.param


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("how,flags,status", [
    ("setsid", (), "measured"),
    ("setpgid", (), "measured"),
    ("fork-loop", (), "measured"),
    ("setsid", ("--exit-early",), "startup-failure"),
], ids=["setsid", "setpgid", "fork-loop", "server-exits-first"])
def test_no_process_outlives_the_measurement(isolation, how, flags, status, tracking, monkeypatch, tmp_path):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    marker = f"escapee-{secrets.token_hex(6)}"
    target = Target(name="escapes", command=fixture_command("escapes_teardown", "--marker", marker, "--how", how, *flags),
                    timeout_seconds=30)
    m = measure_sync(target, isolation=isolation, dual=False)
    assert m.status == status, m.notes
    left = left_after(5.0, marker)
    assert not left, f"{len(left)} escapee(s) outlived a {isolation}/{tracking} measurement: {left}"


@pytest.mark.skipif("cgroup" not in TRACKING, reason="no cgroup v2 directory can be created here")
def test_a_cgroup_also_ends_an_escapee_that_scrubbed_its_environment(monkeypatch):
    # The one route the proc tracking cannot follow (no marker left, no longer a descendant).
    monkeypatch.setenv(reaper.MODE_VARIABLE, "auto")
    marker = f"escapee-{secrets.token_hex(6)}"
    target = Target(name="scrubbed", command=fixture_command("escapes_teardown", "--marker", marker, "--scrub-env"),
                    timeout_seconds=30)
    m = measure_sync(target, isolation="host", dual=False)
    assert m.status == "measured", m.notes
    assert not left_after(5.0, marker)


def test_a_tracker_leaves_no_cgroup_behind():
    parent = reaper.own_cgroup()

    def ours() -> set[str]:
        return {p.name for p in parent.glob(f"{reaper.CGROUP_PREFIX}{os.getpid()}-*")} if parent else set()

    before = ours()
    marker = f"escapee-{secrets.token_hex(6)}"
    m = measure_sync(Target(name="tidy", command=fixture_command("escapes_teardown", "--marker", marker),
                            timeout_seconds=30), isolation="host", dual=False)
    assert m.status == "measured"
    assert ours() == before and not left_after(5.0, marker)
