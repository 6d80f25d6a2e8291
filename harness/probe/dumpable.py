"""Makes the harness not dumpable, so a same-user process cannot read its memory; cheap to import."""

from __future__ import annotations

import ctypes

PR_SET_DUMPABLE = 4


def _load_prctl():
    try:
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
