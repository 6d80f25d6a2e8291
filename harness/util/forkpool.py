"""Work spread over worker processes forked from this one: :func:`map_forked`."""

from __future__ import annotations

import concurrent.futures
import functools
import gc
import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any

_shared: Any = None  # what forked workers inherit for ``fn(shared, item)`` (set only while forking)


def map_forked(fn: Callable[..., Any], items: list[Any], least: int, shared: Any = None) -> list[Any]:
    """``[fn(item) for item in items]`` (``[fn(shared, item) …]`` when ``shared`` is given), over up to 8
    forked workers when there are at least ``least`` items, several cores, fork, and one thread in this
    process (a lock another thread held would stay held in the child); in this process otherwise. ``fn``
    must be module-level; items and results are pickled, ``shared`` is inherited, never pickled."""
    global _shared
    call = fn if shared is None else functools.partial(fn, shared)
    workers = min(os.cpu_count() or 1, 8)
    if len(items) < least or workers < 2 or threading.active_count() > 1 \
            or "fork" not in multiprocessing.get_all_start_methods():
        return [call(item) for item in items]
    chunk = max(1, len(items) // (workers * 4))
    _shared = shared
    gc.freeze()  # what exists now is never collected in a worker: its collections copy none of it
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(fn if shared is None else functools.partial(_with_shared, fn), items, chunksize=chunk))
    finally:
        gc.unfreeze()
        _shared = None


def _with_shared(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(_shared, item)
