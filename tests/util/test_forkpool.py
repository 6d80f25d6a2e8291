"""harness.util.forkpool: the results of a forked map are the in-process results, in order; a worker's
error reaches the caller; the parent's objects are collectable again afterwards; a map started beside this
process's work forks nothing else meanwhile and stops its workers when the block is left by an error;
workers end with a parent killed by a signal."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.util import forkpool


def _square_and_pid(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


def _fail_on_three(n: int) -> int:
    if n == 3:
        raise ValueError("three")
    return n


def test_forked_results_are_the_in_process_results_in_order():
    items = list(range(40))
    forked = forkpool.map_forked(_square_and_pid, items, least=1)
    assert [square for square, _ in forked] == [n * n for n in items]
    assert gc.get_freeze_count() == 0


def test_few_items_stay_in_this_process():
    assert {pid for _, pid in forkpool.map_forked(_square_and_pid, [1, 2], least=3)} == {os.getpid()}


def test_an_error_in_a_worker_reaches_the_caller():
    with pytest.raises(ValueError, match="three"):
        forkpool.map_forked(_fail_on_three, list(range(10)), least=1)
    assert gc.get_freeze_count() == 0


def _scaled(shared: dict, n: int) -> int:
    return shared["factor"] * n


def test_shared_context_reaches_every_call_without_being_pickled():
    shared = {"factor": 3, "unpicklable": lambda: None}
    assert forkpool.map_forked(_scaled, list(range(20)), least=1, shared=shared) == [3 * n for n in range(20)]
    assert forkpool.map_forked(_scaled, [1, 2], least=3, shared=shared) == [3, 6]
    assert forkpool._shared is None


_STARTED_BESIDE = """
import gc, os, threading
from harness.util import forkpool

def square_and_pid(n):
    return n * n, os.getpid()

items = list(range(40))
with forkpool.started(square_and_pid, items, least=1) as results:
    assert threading.active_count() > 1  # the workers are running
    nested = forkpool.map_forked(square_and_pid, [1, 2, 3], least=1)  # no fork while they run
    got = results()
assert [square for square, _ in got] == [n * n for n in items]
assert {pid for _, pid in got} - {os.getpid()}
assert {pid for _, pid in nested} == {os.getpid()}
assert gc.get_freeze_count() == 0 and forkpool._shared is None
print("ok")
"""


def test_started_gives_the_results_after_the_block_ran_beside_the_workers():
    if not _can_fork():
        pytest.skip("no forked workers on this machine")
    # in a process of its own: a thread this test process holds (xdist, a tokenizer pool) would keep it from forking
    done = _in_fresh_process(_STARTED_BESIDE, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def _in_fresh_process(script: str, timeout: float) -> subprocess.CompletedProcess:
    """``script`` run by a fresh interpreter that imports this checkout's harness (its output captured as text)."""
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})


def _can_fork() -> bool:
    """Whether a fresh process with one thread forks workers here (several cores, fork)."""
    return forkpool._workers() >= 2 and "fork" in multiprocessing.get_all_start_methods()


def _mark(folder: Path, n: int) -> int:
    (folder / str(n)).touch()
    time.sleep(0.02)
    return n


def test_leaving_started_by_an_error_cancels_the_work_not_started(tmp_path):
    with pytest.raises(KeyError):
        with forkpool.started(_mark, list(range(200)), least=1, shared=tmp_path):
            raise KeyError("parent")
    assert len(list(tmp_path.iterdir())) < 200  # the chunks not handed to a worker never ran
    assert gc.get_freeze_count() == 0 and forkpool._shared is None


def test_without_workers_started_maps_in_this_process_when_the_results_are_asked_for():
    seen: list[int] = []
    with forkpool.started(seen.append, [1, 2], least=3) as results:
        assert seen == []
        assert results() == [None, None]
    assert seen == [1, 2]


_ORPHAN_PARENT = """
import multiprocessing, sys, time
from harness.util import forkpool

def nap(shared, n):
    time.sleep(0.2)
    return n

with forkpool.started(nap, list(range(400)), least=1, shared=0) as results:
    print(*(p.pid for p in multiprocessing.active_children()), flush=True)
    time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["terminated", "killed"])
def test_workers_end_with_a_parent_killed_while_they_run(sig):
    if not _can_fork():  # (the parent is a fresh process: this one's threads do not matter)
        pytest.skip("no forked workers on this machine")
    with _parent_with_workers(_ORPHAN_PARENT) as (parent, workers):
        parent.send_signal(sig)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(_alive, workers))  # else they would wait for work forever, holding the parent's memory


@contextlib.contextmanager
def _parent_with_workers(script: str):
    """``script`` started in a fresh process that prints its workers' pids on its first line: ``(process,
    pids)``; on leaving, the process and those workers are killed (this test's own orphans, if a check failed)."""
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    try:
        assert workers
        yield parent, workers
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        parent.kill()
        parent.wait()


def _counted(folder: Path, n: int) -> int:
    (folder / f"{n}-{os.getpid()}-{time.monotonic_ns()}").touch()
    return n


@pytest.mark.parametrize("least", [1, 100], ids=["workers", "in-process"])
def test_results_asked_for_twice_are_the_same_and_computed_once(tmp_path, least):
    with forkpool.started(_counted, list(range(20)), least=least, shared=tmp_path) as results:
        first = results()
        assert results() == first == list(range(20))
    assert len(list(tmp_path.iterdir())) == 20


# The second worker cannot be forked (EAGAIN: a process limit, no memory): prints the error and the workers left.
_FORK_FAILS = """
import errno, multiprocessing, os
from harness.util import forkpool

forked, real_fork = [], os.fork

def fork():
    if forked:
        raise BlockingIOError(errno.EAGAIN, "no second worker")
    forked.append(1)
    return real_fork()

os.fork = fork
try:
    forkpool.map_forked(abs, list(range(40)), least=1)
except BlockingIOError as exc:
    print(exc, len(multiprocessing.active_children()), flush=True)
"""


def test_a_worker_that_cannot_be_forked_leaves_none_of_the_others_waiting():
    if not _can_fork():
        pytest.skip("no forked workers on this machine")
    # the first worker waited for work forever, and its parent for it when exiting
    done = _in_fresh_process(_FORK_FAILS, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "[Errno 11] no second worker 0", done.stderr


# Ctrl-C twice while a started map runs: the first in the block beside the workers, the second while it is left.
_TWICE_INTERRUPTED = """
import multiprocessing, signal, sys, time
from harness.util import forkpool

def nap(shared, n):
    time.sleep(0.2)
    return n

fired = []

def interrupt(*_):
    fired.append(1)
    if len(fired) == 2:
        signal.setitimer(signal.ITIMER_REAL, 0)
    raise KeyboardInterrupt

signal.signal(signal.SIGALRM, interrupt)
with forkpool.started(nap, list(range(400)), least=1, shared=0):
    print(*(p.pid for p in multiprocessing.active_children()), flush=True)
    signal.setitimer(signal.ITIMER_REAL, 0.3, 0.3)  # in this process only: a fork inherits no timer
    time.sleep(60)
"""


def test_interrupted_twice_while_leaving_started_the_process_ends_with_its_workers():
    if not _can_fork():
        pytest.skip("no forked workers on this machine")
    # leaving waited for the chunks in flight (10 s each); interrupted there, the exit waited forever
    with _parent_with_workers(_TWICE_INTERRUPTED) as (parent, workers):
        _, err = parent.communicate(timeout=30)
        assert parent.returncode != 0 and "KeyboardInterrupt" in err
        assert not any(map(_alive, workers))
