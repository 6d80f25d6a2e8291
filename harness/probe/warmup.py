"""What a record needs that does not depend on the server, prepared while the install and the first
launch run (issue #16, item 1): the o200k_base tokenizer, the runtime versions
(``isolation.runtime_versions``: ``node``, ``npm``, ``python3``, ``uv --version``) and the
compatibility check's references (``compatibility.prepare``).

``begin()`` starts one background thread per process, the first time a measurement installs or
launches something; later calls (every other measurement of a sweep) find it started, and the results are
cached for the life of the process by their own modules. Nothing here changes a value: whoever needs
one calls the same function as before and gets the cached result, or waits for the thread's call in
progress (``tokenizer.provision`` and ``isolation.runtime_versions`` are single-flight).

The thread only loads a tokenizer that is already provisioned on this machine (a verified file in
our cache: no network). Provisioning that needs the network stays where it was, in the first count,
so its failure is reported there, once, exactly as before.
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
    """Wait up to ``seconds`` (``None``: no bound) for the warm-up to finish; whether it has (tests,
    benchmarks). ``False`` when it was never begun."""
    return _started.is_set() and _done.wait(seconds)


def _warm() -> None:
    try:
        from harness.core import tokenizer
        from harness.probe import compatibility, isolation

        try:
            tokenizer.load_cached()
        except Exception:  # noqa: BLE001 - the first count provisions it, and reports any failure
            pass
        try:
            isolation.runtime_versions()
        except Exception:  # noqa: BLE001 - record building calls it again and reports any failure
            pass
        try:
            compatibility.prepare()
        except Exception:  # noqa: BLE001 - the check loads them again and reports any failure
            pass
    finally:
        _done.set()
