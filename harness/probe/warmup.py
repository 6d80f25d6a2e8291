"""The warm-up: what a record needs that does not depend on the server, loaded in a thread of its own once per
process while a measurement waits on its install (:func:`begin`, :func:`heavy_after_spawn`, :func:`tokenizer_tried`).

The runtime versions (child processes: little CPU here) are asked at once. The tokenizer, the compatibility
references and the record's and badge's schema validators wait for the install's process, and load while it
runs: they hold the GIL for a third of a second (tiktoken builds its encoder in one call), which would otherwise
delay that process's start. Without one (an install kept from before, a remote server), the launches wait for the
tokenizer instead: held up beside a launch, this process could read a server's words too late for the settle
window (session.SETTLE_QUIET_SECONDS).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from harness.core import tokenizer
from harness.probe import compatibility, isolation, process
from harness.util import schemas

_started = threading.Event()
_heavy_allowed = threading.Event()
_tokenizer_tried = threading.Event()
_done = threading.Event()
_lock = threading.Lock()
_TOKENIZER_WAIT_SECONDS = 120.0  # at most: loading it from the cache takes under a second


def begin() -> None:
    """Start the warm-up thread once per process. Never raises."""
    with _lock:
        if _started.is_set():
            return
        _started.set()
    threading.Thread(target=_warm, name="mcp-context-cost-warmup", daemon=True).start()


@contextlib.contextmanager
def heavy_after_spawn():
    """The warm-up's heavy part allowed by the first process spawned in the block (``process.AFTER_SPAWN``)."""
    token = process.AFTER_SPAWN.set(_heavy_allowed.set)
    try:
        yield
    finally:
        process.AFTER_SPAWN.reset(token)


async def tokenizer_tried() -> None:
    """Allow the warm-up's heavy part if nothing has yet, and wait until it has tried to load the tokenizer."""
    _heavy_allowed.set()
    if _started.is_set() and not _tokenizer_tried.is_set():
        await asyncio.to_thread(_tokenizer_tried.wait, _TOKENIZER_WAIT_SECONDS)


def finished(seconds: float | None = None) -> bool:
    """Let the warm-up's heavy part begin now and wait up to ``seconds`` for the whole; whether it finished
    (``False`` when never begun)."""
    _heavy_allowed.set()
    return _started.is_set() and _done.wait(seconds)


def _warm() -> None:
    try:
        try:
            isolation.runtime_versions()
        except Exception:  # noqa: BLE001 - record building calls it again and reports any failure
            pass
        _heavy_allowed.wait()
        try:
            tokenizer.load_cached()
        except Exception:  # noqa: BLE001 - the first count provisions it, and reports any failure
            pass
        _tokenizer_tried.set()
        try:
            compatibility.prepare()
        except Exception:  # noqa: BLE001 - the check loads them again and reports any failure
            pass
        for schema in ("measurement", "badge"):
            try:
                schemas.validator(schema)
            except Exception:  # noqa: BLE001 - the record's check builds it again and reports any failure
                pass
    finally:
        _tokenizer_tried.set()
        _done.set()
