"""Reading a server's JSON-RPC replies: which request a reply answers, and what an error reply says.

Shared by the conversation (``session``) and the Streamable HTTP transport (``remote``), which
must agree on when a request has been answered: the transport stops reading a response stream at
the event that answers its request.
"""

from __future__ import annotations

import re

from harness.probe.outcome import Failure

EXACT = "exact"
STRING = "string"
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def answers(reply_id: object, request_id: int) -> str | None:
    """Whether a reply carrying ``reply_id`` answers the request this client sent as ``request_id``
    (a positive integer): ``EXACT``, ``STRING`` or ``None``.

    JSON-RPC 2.0 asks a server to echo the id unchanged. The official SDKs are more lenient, and a
    server that works in them must measure here (issue #11, item 2): the Python SDK correlates a
    string id through ``int()`` (``mcp.shared.dispatcher.coerce_request_id``, SDK 2.x) and the
    TypeScript SDK through ``Number()`` (``Protocol._onresponse``), so ``"2"`` answers request 2 in
    both. ``STRING`` is returned for a string that reads as the same integer under either rule
    (surrounding whitespace, a sign, leading zeros or a fraction of zero: ``" 2"``, ``"+2"``,
    ``"02"``, ``"2.0"``); a boolean is never an id. Numbers arrive as ``float`` (``JSON.parse``
    semantics), so ``2.0`` is an exact match for 2.
    """
    if isinstance(reply_id, bool):
        return None
    if isinstance(reply_id, (int, float)):
        return EXACT if reply_id == request_id else None
    if isinstance(reply_id, str) and _as_number(reply_id) == request_id:
        return STRING
    return None


def _as_number(text: str) -> float | None:
    """``text`` read as a decimal number the way ``int()``/``Number()`` read an id, or ``None``.
    Only decimal forms: ``Number("")`` is 0 and ``Number("0x2")`` is 2, but no id this client
    sends is 0, and a hexadecimal echo is not something a server does by accident."""
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
    """How JavaScript would name ``value``'s type in a sentence (``a string``, ``null``, …)."""
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
