"""Work spread over worker processes forked from this one: :func:`map_forked`."""

from __future__ import annotations

import concurrent.futures
import gc
import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def map_forked(fn: Callable[[T], R], items: list[T], least: int) -> list[R]:
    """``[fn(item) for item in items]``, over up to 8 forked workers when there are at least ``least`` items,
    several cores, fork, and one thread in this process (a lock another thread held would stay held in the
    child); in this process otherwise. ``fn`` must be module-level; items and results are pickled."""
    workers = min(os.cpu_count() or 1, 8)
    if len(items) < least or workers < 2 or threading.active_count() > 1 \
            or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(item) for item in items]
    chunk = max(1, len(items) // (workers * 4))
    gc.freeze()  # what exists now is never collected in a worker: its collections copy none of it
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(fn, items, chunksize=chunk))
    finally:
        gc.unfreeze()
