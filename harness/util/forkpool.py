"""Work spread over worker processes forked from this one: :func:`map_forked`, and :func:`started` for a
map this process goes on working beside."""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import functools
import gc
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

_shared: Any = None  # what forked workers inherit for ``fn(shared, item)`` (set only while workers run)


def map_forked(fn: Callable[..., Any], items: list[Any], least: int, shared: Any = None) -> list[Any]:
    """``[fn(item) for item in items]`` (``[fn(shared, item) …]`` when ``shared`` is given), over up to 8
    forked workers when :func:`forks` says so, in this process otherwise (a lock another thread held would
    stay held in the child). ``fn`` must be module-level; items and results are pickled, ``shared`` is
    inherited, never pickled."""
    with started(fn, items, least, shared) as results:
        return results()


def forks(count: int, least: int) -> bool:
    """Whether a map of ``count`` items forks workers: at least ``least`` items, several cores, fork, and
    one thread in this process."""
    return count >= least and _workers() >= 2 and threading.active_count() == 1 \
        and "fork" in multiprocessing.get_all_start_methods()


@contextlib.contextmanager
def started(fn: Callable[..., Any], items: list[Any], least: int, shared: Any = None) -> Iterator[Callable[[], list[Any]]]:
    """:func:`map_forked` begun in workers on entry, while this process runs the block; the callable it
    gives waits for the results (raising a worker's error; asked again, the same list). Without workers
    (:func:`forks`) the map runs in this process when that callable is first called. Leaving the block
    stops the workers (by an error: killed, their work in flight thrown away). While they run this process
    has threads: no other map forks (each runs in-process)."""
    global _shared
    call = fn if shared is None else functools.partial(fn, shared)
    if not forks(len(items), least):
        yield functools.cache(lambda: [call(item) for item in items])  # asked twice, computed once
        return
    workers = _workers()
    chunk = max(1, len(items) // (workers * 4))
    _shared = shared
    gc.freeze()  # what exists now is never collected in a worker: its collections copy none of it
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                                  initializer=_end_with, initargs=(os.getpid(),))
    try:
        # every chunk is submitted now (the workers fork first, from this one thread)
        mapped = pool.map(fn if shared is None else functools.partial(_with_shared, fn), items, chunksize=chunk)
        yield functools.cache(lambda: list(mapped))  # (the iterator gives its results once)
    except BaseException:
        # Killed, not waited for: the work in flight would be thrown away, and a second Ctrl-C while waiting
        # would hang the exit. A worker that could not be forked (EAGAIN, ENOMEM) raises here too: no manager
        # thread runs yet, so shutting down would neither stop the ones forked before it nor send them work.
        _kill(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()
        _shared = None


def _kill(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill the workers of ``pool`` and wait for them to end."""
    for process in list((pool._processes or {}).values()):
        process.kill()
        process.join()


def _end_with(parent: int) -> None:
    """In a worker: be killed when ``parent`` ends (on Linux). A parent killed by a signal shuts no pool
    down, and its workers would otherwise wait for work forever, each holding a copy of its memory."""
    with contextlib.suppress(OSError, AttributeError):  # no prctl: not Linux
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _workers() -> int:
    return min(os.cpu_count() or 1, 8)


def _with_shared(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(_shared, item)
