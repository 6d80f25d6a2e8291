"""Prepares, beside the first launch, what a record needs that does not depend on the server: the tokenizer (only
when already provisioned) and the runtime versions. ``begin`` starts one thread per process; callers get the
same cached values as without it.
"""

from __future__ import annotations

import threading

_started = threading.Event()
_done = threading.Event()
_lock = threading.Lock()


def begin() -> None:
    """Start the warm-up thread unless this process already did. Never raises."""
    with _lock:
        if _started.is_set():
            return
        _started.set()
    threading.Thread(target=_warm, name="mcp-context-cost-warmup", daemon=True).start()


def wait(seconds: float | None = None) -> bool:
    """Wait up to ``seconds`` for the warm-up; whether it finished (``False`` when never begun)."""
    return _started.is_set() and _done.wait(seconds)


def _warm() -> None:
    try:
        from harness.core import tokenizer
        from harness.probe import isolation

        try:
            tokenizer.load_cached()
        except Exception:  # noqa: BLE001 - the first count provisions it, and reports any failure
            pass
        try:
            isolation.runtime_versions()
        except Exception:  # noqa: BLE001 - record building calls it again and reports any failure
            pass
    finally:
        _done.set()
