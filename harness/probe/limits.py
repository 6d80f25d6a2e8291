"""Bounds on what one measurement may consume (issue #3, "Resources, limits, teardown").

Defaults are generous for real servers (the largest published capture is ~200 KB) and finite for
hostile ones. Every bound is recorded in a failure note when it ends a run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """``max_message_bytes``: one JSON-RPC line from the server (bytes).
    ``max_total_bytes``: all stdout bytes of one launch (bytes).
    ``max_pages``: ``tools/list`` pages followed per launch.
    ``stderr_tail_bytes``: how much of the end of stderr is kept for notes (bytes).
    ``max_noise_lines``: non-JSON stdout lines tolerated before the run is called broken.
    """

    max_message_bytes: int = 16 * 1024 * 1024
    max_total_bytes: int = 64 * 1024 * 1024
    max_pages: int = 100
    stderr_tail_bytes: int = 4096
    max_noise_lines: int = 10_000


DEFAULT_LIMITS = Limits()
