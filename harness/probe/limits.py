"""Bounds on what one measurement may consume (issue #3, "Resources, limits, teardown").

Defaults are generous for real servers (the largest published capture is ~200 KB) and finite for
hostile ones. Every bound is recorded in a failure note when it ends a run. Each can be changed
with an environment variable, read once per measurement (``from_env``):

    MCP_CONTEXT_COST_MAX_MESSAGE_BYTES   one JSON-RPC message            (default 16 MiB)
    MCP_CONTEXT_COST_MAX_TOTAL_BYTES     all a server sends in one launch (default 64 MiB)
                                         (stdout; over HTTP every body, after decoding)
    MCP_CONTEXT_COST_MAX_PAGES           tools/list pages per launch      (default 100)
    MCP_CONTEXT_COST_STDERR_TAIL_BYTES   stderr kept for notes            (default 4096)
    MCP_CONTEXT_COST_MAX_NOISE_LINES     non-JSON stdout lines tolerated  (default 10000)
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass


class TransportLimitExceeded(Exception):
    """The server sent more than a configured bound allows. ``str()`` names the bound and its value."""


class MalformedReply(TransportLimitExceeded):
    """A message arrived and this client refuses it: too large, nested too deep, or not JSON where
    a JSON-RPC reply was clearly meant. ``str()`` says what was wrong. A deterministic defect of the
    server's, so the run ends at once with that evidence (never silence until the deadline)."""


@dataclass(frozen=True)
class Limits:
    """``max_message_bytes``: one JSON-RPC line from the server (bytes).
    ``max_total_bytes``: all a server sends in one launch (bytes): stdout, or every HTTP body after
    content decoding (a compressed body inflates; issue #9).
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
ENV_PREFIX = "MCP_CONTEXT_COST_"


def from_env(environ=None) -> Limits:
    """``Limits`` with any ``MCP_CONTEXT_COST_<FIELD>`` override applied (positive integers).

    Raises ``ValueError`` naming the variable when a value is not a positive integer.
    """
    environ = os.environ if environ is None else environ
    changes = {}
    for field in dataclasses.fields(Limits):
        name = ENV_PREFIX + field.name.upper()
        if name in environ:
            try:
                value = int(environ[name])
            except ValueError:
                value = 0
            if value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {environ[name]!r}")
            changes[field.name] = value
    return dataclasses.replace(DEFAULT_LIMITS, **changes)
