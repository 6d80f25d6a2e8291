"""Only the scheduling of one measurement changes, proved by structure (which
processes were alive at once, what has ended when), never by timing.

* the confirmation launch runs beside the first: both launches are alive at the same time, and the
  records say exactly what the one-after-the-other schedule says for servers that do not care;
* a launch slot limiter (``launch_slots``) counts the pair as two launches;
* teardown: ``measure`` never returns before every process it started has ended — even servers
  that ignore end-of-input and SIGTERM — and inside an outer ``teardown.scope()`` it returns with
  the teardown still under way, which the scope then completes;
* the warm-up (tokenizer, runtime versions) is begun by the first launch and changes no value; the tokenizer
  loads beside the install's process when there is one (after it started), and before the launches otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core import tokenizer
from harness.probe import isolation, reaper, build_record, teardown
from harness.probe.measure import measure, measure_sync
from harness.probe.warmup import finished as warmup_finished
from harness.probe.target import Target
from tests.conftest import REPO, fixture_command
from tests.probe.helpers import measure_and_write, nothing_left, results_root  # noqa: F401


def rendezvous(tmp_path: Path, name: str, wait: float = 30.0) -> Target:
    meeting = tmp_path / name
    # a working directory of its own (a config's ``cwd``): both launches see the same path, so the pair is
    # judged at once (test_host_beside covers a launch in the harness's per-entry directory)
    return Target(name=name, command=fixture_command("rendezvous", "--dir", str(meeting), "--wait", str(wait)),
                  timeout_seconds=60, cwd=str(tmp_path))


def names(rec: dict) -> list[str]:
    return [tool["name"] for tool in rec["tools"]]


def pids(directory: Path) -> list[int]:
    return sorted(int(p.name) for p in directory.iterdir()) if directory.is_dir() else []


def test_the_confirmation_is_alive_beside_the_first_launch(tmp_path, results_root):
    run = measure_and_write(rendezvous(tmp_path, "meet-beside"), results_root)
    rec = run.record
    assert rec["status"] == "measured" and rec["confirmed"] is True, run.notes
    assert names(rec) == ["together"]  # each launch saw the other one alive
    assert [a["role"] for a in rec["attempts"]] == ["first", "confirmation"]
    assert len(pids(tmp_path / "meet-beside")) == 2  # two launches, no more


@pytest.mark.slow
def test_the_fixture_tells_launches_one_after_the_other(tmp_path, results_root, launches_in_order):
    # the sequential order, for contrast: the first waits alone, the confirmation finds its file
    run = measure_and_write(rendezvous(tmp_path, "meet-after", wait=0.5), results_root)
    assert run.record["status"] == "dynamic", run.notes
    assert names(run.record) == ["alone"]
    assert "(only in the second: together; only in the first: alone)" in run.notes


@pytest.mark.slow
def test_one_launch_slot_makes_the_pair_one_after_the_other(tmp_path, results_root):
    run = measure_and_write(rendezvous(tmp_path, "meet-one-slot", wait=0.5), results_root,
                            launch_slots=asyncio.Semaphore(1))
    # the early launch waited for the slot: the first waited alone and the early one found its file, so the pair
    # disagreed and was made again one after the other (two launches that met would have agreed, as below)
    assert len(pids(tmp_path / "meet-one-slot")) == 4, run.notes
    assert [a["role"] for a in run.record["attempts"]] == ["first", "confirmation"]


def test_two_launch_slots_let_the_pair_meet(tmp_path, results_root):
    run = measure_and_write(rendezvous(tmp_path, "meet-two-slots"), results_root, launch_slots=asyncio.Semaphore(2))
    assert run.record["status"] == "measured" and names(run.record) == ["together"], run.notes


def test_a_slot_limiter_shared_by_two_measurements_never_has_more_than_its_launches(tmp_path):
    class Counting:
        """An async context manager counting launches in flight (at most ``size``)."""

        def __init__(self, size: int):
            self.gate, self.now, self.most = asyncio.Semaphore(size), 0, 0

        async def __aenter__(self):
            await self.gate.acquire()
            self.now += 1
            self.most = max(self.most, self.now)

        async def __aexit__(self, *exc):
            self.now -= 1
            self.gate.release()

    async def both():
        slots = Counting(3)
        targets = [rendezvous(tmp_path, f"shared-{i}", wait=0.3) for i in range(2)]
        done = await asyncio.gather(*(measure(t, isolation="host", launch_slots=slots) for t in targets))
        return slots, done

    slots, done = asyncio.run(both())
    assert slots.most == 3 and slots.now == 0
    assert all(m.capture.ok and len(m.attempts) == 2 for m in done)


def stubborn(tmp_path: Path, name: str) -> tuple[Target, Path]:
    where = tmp_path / f"{name}-pids"
    return Target(name=name, command=fixture_command("stubborn", "--pids", str(where)), timeout_seconds=60,
                  cwd=str(tmp_path)), where  # a cwd of its own: the pair runs at once (see rendezvous)


@pytest.mark.slow
@pytest.mark.parametrize("dual", [True, False])
def test_measure_returns_only_after_a_stubborn_server_has_ended(tmp_path, results_root, dual):
    target, where = stubborn(tmp_path, f"stubborn-{str(dual).lower()}")
    run = measure_and_write(target, results_root, dual=dual)
    assert run.record["status"] == "measured", run.notes
    started = pids(where)
    assert len(started) == (2 if dual else 1)
    assert not [pid for pid in started if reaper.alive(pid)]  # no waiting: already gone on return
    assert [a["exitCode"] for a in run.record["attempts"]] == [-9] * len(started)  # SIGKILL was needed


@pytest.mark.slow
def test_inside_an_outer_scope_the_teardown_runs_beside_the_next_step(tmp_path):
    target, where = stubborn(tmp_path, "stubborn-scope")
    seen = {}

    async def sweep_like():
        async with teardown.scope():
            measurement = await measure(target, isolation="host")
            seen["alive on return"] = [pid for pid in pids(where) if reaper.alive(pid)]
            seen["exit codes on return"] = [a.exit_code for a in measurement.attempts]
            await measurement.ended()  # this measurement's own teardowns, inside the outer scope
            seen["alive once ended"] = [pid for pid in pids(where) if reaper.alive(pid)]
        seen["alive after the scope"] = [pid for pid in pids(where) if reaper.alive(pid)]
        return measurement

    measurement = asyncio.run(sweep_like())
    assert measurement.capture.ok and len(pids(where)) == 2
    # both servers ignore EOF and SIGTERM: their teardown takes the whole grace, after measure returned
    assert sorted(seen["alive on return"]) == pids(where)
    assert seen["exit codes on return"] == [None, None]
    assert seen["alive once ended"] == [] and seen["alive after the scope"] == []
    assert [a.exit_code for a in measurement.attempts] == [-9, -9]  # filled in by the teardown


def test_the_warm_up_begins_with_the_first_launch_and_changes_no_value(tmp_path, results_root):
    run = measure_and_write(rendezvous(tmp_path, "meet-warm", wait=0.3), results_root, dual=False)
    assert warmup_finished(120)
    assert run.record["isolation"]["runtimes"] == isolation._probe_versions()
    assert isolation.runtime_versions() is not isolation.runtime_versions()  # a copy each time
    assert build_record.build(run.measurement)["totalTokens"] == run.record["totalTokens"]


# In a fresh process (the warm-up runs once per process): how many processes the measurement had started when the
# tokenizer began to load, and in all.
_ORDER = """
import asyncio, json, sys
from harness.core import tokenizer
from harness.probe import measure, warmup
from harness.probe.target import Target
started, at_load = [], []
spawn = asyncio.create_subprocess_exec
async def counted(*args, **kwargs):
    proc = await spawn(*args, **kwargs)
    started.append(proc.pid)
    return proc
asyncio.create_subprocess_exec = counted
load = tokenizer.load_cached
def spied(*args, **kwargs):
    at_load.append(len(started))
    return load(*args, **kwargs)
tokenizer.load_cached = spied
m = measure.measure_sync(Target(name="warm-order", command=sys.argv[2], timeout_seconds=120), dual=sys.argv[1] == "dual",
                         isolation="host")
assert warmup.finished(120)
print(json.dumps({"ok": m.capture.ok, "at_load": at_load, "started": len(started)}))
"""


def _order(tmp_path: Path, dual: str, command: str, env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", _ORDER, dual, command], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("dual", ["single", "dual"])
def test_without_an_install_process_the_tokenizer_loads_before_the_launches(tmp_path, dual):
    seen = _order(tmp_path, dual, fixture_command("well_behaved"))
    assert seen["ok"] and seen["started"] == (2 if dual == "dual" else 1)
    assert seen["at_load"] == [0]  # loaded once, before the launches: never beside their conversations


@pytest.mark.slow
def test_the_tokenizer_loads_beside_the_install_s_process(tmp_path):
    """An install that runs npx (nothing kept in this cache): the tokenizer loads once npx has started, before the
    launches."""
    cache = tmp_path / "cache"
    shutil.copytree(tokenizer.cache_dir(), cache / "tiktoken")  # the ranks, not the kept installs
    seen = _order(tmp_path, "dual", "npx -y @modelcontextprotocol/server-memory@2026.8.31",
                  {"MCP_CONTEXT_COST_CACHE": str(cache)})
    assert seen["ok"] and seen["started"] == 3  # npx, then the two launches
    assert seen["at_load"] == [1]


@pytest.mark.slow
def test_a_cancelled_measurement_ends_both_launches_at_once(tmp_path):
    """An interrupted sweep cancels its measurements: the early confirmation is cancelled with the
    first launch (not awaited to its budget), and neither leaves a process behind."""
    target = Target(name="cancel-both", command=fixture_command("never_answers", "--ignore-eof", "--ignore-sigterm"),
                    timeout_seconds=600, cwd=str(tmp_path))  # a cwd of its own: the pair runs at once (see rendezvous)

    before = reaper.descendants(os.getpid())  # whatever earlier tests left is not this test's

    def ours() -> set[int]:
        return {pid for pid in reaper.descendants(os.getpid()) - before if reaper.alive(pid)}

    async def interrupted():
        task = asyncio.ensure_future(measure(target, isolation="host"))
        while len(ours()) < 4 and not task.done():  # both launches started: each an intermediate and its server
            await asyncio.sleep(0.02)
        task.cancel()
        # bounded far below the 600 s budget a launch awaited to its end would take
        done, _ = await asyncio.wait({task}, timeout=120)
        return done

    assert asyncio.run(interrupted()), "the cancelled measurement did not end"
    assert not ours()
