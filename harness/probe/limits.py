"""Bounds on what one launch may consume, and the errors that end it. docs/OPERATIONS.md lists the variables."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass


class TransportLimitExceeded(Exception):
    """The server sent more than a bound allows; ``str()`` names the bound."""


class MalformedReply(TransportLimitExceeded):
    """A message this client refuses: the run ends at once with that evidence."""


@dataclass(frozen=True)
class Limits:
    """Bounds on one launch; each overridable by ``MCP_CONTEXT_COST_<FIELD>`` (``from_env``)."""

    max_message_bytes: int = 16 * 1024 * 1024  # one JSON-RPC message
    max_total_bytes: int = 64 * 1024 * 1024  # all a server sends: stdout, or every HTTP body after decoding
    max_pages: int = 100  # tools/list pages per listing
    stderr_tail_bytes: int = 4096  # end of stderr kept for notes
    max_noise_lines: int = 10_000


DEFAULT_LIMITS = Limits()
ENV_PREFIX = "MCP_CONTEXT_COST_"


def from_env(environ=None) -> Limits:
    """``Limits`` with ``MCP_CONTEXT_COST_<FIELD>`` overrides; ``ValueError`` naming a variable that is not a
    positive integer."""
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
