"""The harness keeps its own environment and memory to itself: it is not dumpable.

With ``PR_SET_DUMPABLE`` 0 a process of the same user without ``CAP_SYS_PTRACE`` can no longer read
the harness's ``/proc/<pid>/environ``, ``mem``, ``maps`` or ``fd``, nor attach to it (docs/SECURITY.md,
"host"). The command line sets it before anything else, so no moment of a run is readable, and
``process.spawn`` sets it for callers that launch without the command line. Children are dumpable
again from their exec. Cheap to import (no asyncio), so the command line can call it first.
"""

from __future__ import annotations

PR_SET_DUMPABLE = 4


def _load_prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


_PRCTL = _load_prctl()
_state = {"cleared": False}


def not_dumpable() -> None:
    """Make this process not dumpable (once). A no-op where prctl is unavailable."""
    if _PRCTL is not None and not _state["cleared"]:
        _PRCTL(PR_SET_DUMPABLE, 0, 0, 0, 0)
        _state["cleared"] = True
