"""Which request a reply answers, what an error says, and ``Noise``: the counted sample of what answers nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.probe import redact
from harness.probe.limits import TransportLimitExceeded
from harness.probe.outcome import Failure

EXACT = "exact"
STRING = "string"
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def answers(reply_id: object, request_id: int) -> str | None:
    """Whether ``reply_id`` answers request ``request_id``: ``EXACT``, ``STRING`` (read as the same integer, as
    the SDKs do) or ``None``."""
    if isinstance(reply_id, bool):
        return None
    if isinstance(reply_id, (int, float)):
        return EXACT if reply_id == request_id else None
    if isinstance(reply_id, str) and _as_number(reply_id) == request_id:
        return STRING
    return None


def _as_number(text: str) -> float | None:
    text = text.strip()
    return float(text) if _DECIMAL.fullmatch(text) else None


def error_failure(phase: str, error: object) -> Failure:
    """The ``Failure`` for a JSON-RPC ``error`` member received in ``phase``."""
    if not isinstance(error, dict):
        return Failure("bad-reply", phase, f"error is {js_type(error)}, not an object")
    code = error.get("code")
    code = int(code) if isinstance(code, float) and code.is_integer() else None
    message = text_or_none(error.get("message"))
    detail = f"JSON-RPC error {code}: {message}"
    return Failure("jsonrpc-error", phase, detail, code=code, message=message, data=error.get("data"))


def text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def js_type(value: object) -> str:
    """How JavaScript would name ``value``'s type in a sentence."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


SAMPLE_SIZE = 3
SAMPLE_CHARS = 120


@dataclass
class Noise:
    """Things skipped: ``count``, the first ``SAMPLE_SIZE`` as ``sample``; past ``limit``, an error."""

    limit: int
    what: str = "non-JSON-RPC lines or events"
    count: int = 0
    sample: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        """Count ``text`` as noise. Raises ``TransportLimitExceeded`` once ``count`` passes ``limit``."""
        self.count += 1
        if len(self.sample) < SAMPLE_SIZE:
            self.sample.append(redact.cut(text, SAMPLE_CHARS))  # redacted before the cut
        if self.count > self.limit:
            raise TransportLimitExceeded(f"more than {self.limit} {self.what}")
