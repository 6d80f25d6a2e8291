"""A confirmation starts beside the first launch (in a fresh directory of its own under ``host``; the first keeps
the per-entry directory) and only ever confirms: when the two launches started together disagree, both are
dropped and the one-after-the-other order decides. Proved from the fixtures' own evidence (the files each launch
writes), never by timing:

* a deterministic server's two launches are alive at once, and the pair is measured and confirmed;
* a server naming its working directory differs beside the first only by the directory: measured, confirmed, and
  the record the one-after-the-other order gives;
* a server that lists another tool while another copy runs is measured without it;
* a server whose tools change at every launch stays dynamic, under ``host`` and ``sandbox``;
* ``MCP_CONTEXT_COST_CONFIRMATION=after`` still makes the confirmation after the first has ended;
* the early launch's directory, left by a harness killed while it ran, is removed by the next launch of the name."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.probe import build_record, launch, reaper, workdir
from harness.probe.measure import measure, measure_sync
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.probe.helpers import REPO, measure_and_write, nothing_left, results_root  # noqa: F401

STABLE = ["stable", "stable"]  # two launches in the per-entry directory
# two started together (the early one elsewhere), then two one after the other in the per-entry directory
REDONE = ["apart", "stable", "stable", "stable"]


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))


def volatile(name: str, log: Path, *flags: str) -> Target:
    return Target(name=name, command=fixture_command("volatile", *flags, "--log", str(log)), timeout_seconds=30)


def launches(log: Path, name: str) -> list[str]:
    """Where each launch ran, sorted: ``stable`` (the per-entry directory) or ``apart`` (elsewhere)."""
    own = str(workdir.own_path(name))
    return sorted("stable" if p.read_text() == own else "apart" for p in log.iterdir())


def summary(rec: dict) -> tuple:
    return (rec["status"], rec["confirmed"], rec["totalTokens"], rec["canonicalSha256"], rec["notes"],
            [(a["role"], a["outcome"]) for a in rec["attempts"]])


def build(target: Target) -> dict:
    return build_record.build(measure_sync(target, isolation="host"))


class EarlyFirst:
    """Launch slots that hold the first launch until the second has begun: the early launch starts first."""

    def __init__(self) -> None:
        self.entered = 0
        self.second = asyncio.Event()

    async def __aenter__(self):
        self.entered += 1
        if self.entered == 1:
            await self.second.wait()
        else:
            self.second.set()

    async def __aexit__(self, *exc):
        return None


def test_a_deterministic_host_servers_two_launches_are_alive_at_once(tmp_path, results_root):
    meeting = tmp_path / "meeting"
    target = Target(name="meet-host", command=fixture_command("rendezvous", "--dir", str(meeting)), timeout_seconds=60)
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == "measured" and run.record["confirmed"] is True, run.notes
    assert [t["name"] for t in run.record["tools"]] == ["together"]  # each launch saw the other alive
    assert len(list(meeting.iterdir())) == 2  # no third launch
    assert [a["role"] for a in run.record["attempts"]] == ["first", "confirmation"]


@pytest.mark.parametrize("order", ["first-first", "early-first"])
def test_a_server_naming_its_directory_is_measured_and_the_first_keeps_the_per_entry_directory(tmp_path, order):
    log = tmp_path / "log"
    target = volatile("cwd-beside", log, "--cwd-in-description")
    slots = EarlyFirst() if order == "early-first" else None
    m = measure_sync(target, isolation="host", launch_slots=slots)
    assert m.status == "measured" and m.confirmed is True, m.notes
    assert str(workdir.own_path("cwd-beside")) in m.capture.tools[0]["description"]
    # the early launch ran elsewhere and differed by its directory: both dropped, and made again one after the other
    assert launches(log, "cwd-beside") == REDONE
    assert [c.ok for c in m.attempts] == [True, True] and len(m.attempt_info) == 2
    assert not any("differed" in note for note in m.notes)
    assert not any(reaper.alive(int(p.name)) for p in log.iterdir())
    assert not any(Path(p.read_text()).exists() for p in log.iterdir())  # the fresh directory is gone too


def test_a_redone_confirmation_leaves_the_record_the_one_after_the_other_order_gives(tmp_path, monkeypatch):
    beside = build(volatile("cwd-record", tmp_path / "beside", "--cwd-in-description"))
    assert launches(tmp_path / "beside", "cwd-record") == REDONE
    monkeypatch.setenv("MCP_CONTEXT_COST_CONFIRMATION", "after")
    after = build(volatile("cwd-record", tmp_path / "after", "--cwd-in-description"))
    assert launches(tmp_path / "after", "cwd-record") == STABLE
    assert summary(beside) == summary(after)
    assert beside["status"] == "measured" and beside["confirmed"] is True


def test_a_host_server_with_new_tools_at_every_launch_stays_dynamic(tmp_path):
    log = tmp_path / "log"
    m = measure_sync(volatile("fresh-host", log, "--fresh-name"), isolation="host")
    assert m.status == "dynamic" and m.confirmed is True, m.notes
    # the two started together differed: dropped; two one after the other, in the entry's directory, decide
    assert launches(log, "fresh-host") == REDONE
    assert len(m.attempts) == 2
    assert any("tool set differed between two launches: 1 vs 1 tools (only in the second: search_" in n for n in m.notes)


class FirstAfterLock:
    """Launch slots that let the early launch start first and hold the first launch until that one holds its lock."""

    def __init__(self, taken: Path) -> None:
        self.entered, self.taken = 0, taken

    async def __aenter__(self):
        self.entered += 1
        if self.entered == 1:
            for _ in range(600):
                if self.taken.exists():
                    return
                await asyncio.sleep(0.05)
            raise AssertionError("the early launch never took its lock")

    async def __aexit__(self, *exc):
        return None


def test_a_server_that_sees_its_other_copy_is_measured_without_what_that_made_it_list(tmp_path):
    lock = tmp_path / "lock"
    made = []

    async def counted(t, budget, limits, version, **kwargs):
        made.append(t.name)
        return await launch.launch_once(t, budget, limits, version, isolation="host", **kwargs)

    target = Target(name="busy-host", timeout_seconds=30, command=fixture_command("volatile", "--busy-when-shared", str(lock)))
    m = asyncio.run(measure(target, isolation="host", launcher=counted,
                            launch_slots=FirstAfterLock(Path(str(lock) + ".taken"))))
    assert m.status == "measured" and m.confirmed is True, m.notes
    assert "busy" not in [t["name"] for t in m.capture.tools]
    assert len(made) == 4 and len(m.attempts) == 2  # two together disagreed; two one after the other decided
    assert not any("differed" in note for note in m.notes)


@pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap")
@pytest.mark.parametrize("flag, status, made_count", [("--fresh-name", "dynamic", 4), ("--cwd-in-description", "measured", 2)])
def test_under_the_sandbox_one_path_and_a_difference_is_settled_one_after_the_other(flag, status, made_count):
    made = []

    async def counted(t, budget, limits, version, **kwargs):
        made.append(t.name)
        return await launch.launch_once(t, budget, limits, version, isolation="sandbox", **kwargs)

    target = Target(name="fresh-sandbox", command=fixture_command("volatile", flag), timeout_seconds=30)
    m = asyncio.run(measure(target, isolation="sandbox", launcher=counted))
    assert m.status == status and m.confirmed is True, m.notes
    # both see one path: the directory never differs; tools new at every launch are settled one after the other
    assert len(made) == made_count and len(m.attempts) == 2


def test_after_still_makes_the_confirmation_after_the_first(tmp_path, results_root, launches_in_order):
    meeting = tmp_path / "meeting"
    target = Target(name="meet-after-host", command=fixture_command("rendezvous", "--dir", str(meeting), "--wait", "0.5"),
                    timeout_seconds=60)
    run = measure_and_write(target, results_root, isolation="host")
    assert run.record["status"] == "dynamic", run.notes
    assert [t["name"] for t in run.record["tools"]] == ["alone"]  # the first waited alone
    assert len(list(meeting.iterdir())) == 2


def test_a_harness_killed_while_the_early_launch_runs_leaves_its_directory_to_the_next_launch(tmp_path):
    pids = tmp_path / "pids"
    harness = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "measure", "--name", "killed-beside", "--isolation", "host",
         "--command", fixture_command("stubborn", "--pids", str(pids)), "--out", str(tmp_path / "out")],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        dirs: set[str] = set()
        while len(dirs) < 2 and harness.poll() is None:  # both launches started: each names its own directory
            for p in pids.iterdir() if pids.is_dir() else ():
                with contextlib.suppress(OSError):
                    dirs.add(os.readlink(f"/proc/{p.name}/cwd"))
            time.sleep(0.02)
    finally:
        harness.kill()  # SIGKILL: nothing of the harness cleans up
        harness.wait()
    own = str(workdir.own_path("killed-beside"))
    assert len(dirs) == 2 and own in dirs
    (apart,) = dirs - {own}
    assert Path(apart).is_dir()
    with workdir.launch_dir("killed-beside", needs_git=False):
        pass
    assert not Path(apart).exists()
    for p in pids.iterdir():  # the sentinel ends what the killed harness left running
        for _ in range(600):
            if not reaper.alive(int(p.name)):
                break
            time.sleep(0.05)
        assert not reaper.alive(int(p.name))
