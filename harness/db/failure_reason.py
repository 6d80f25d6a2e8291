"""One readable reason per failed record: ``reason`` and ``decisive`` keep the line a person acts on
(``npm error 404 …``), never cut, not escaped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from harness.core.record import NUMBERED


_QUOTED = re.compile(r"(?:stderr ends|it said|the failure says?): (?P<quote>['\"])(?P<text>.*)", re.DOTALL)
_HOST = re.compile(r"host='(?P<host>[^']+)'")
_RESOLVE = re.compile(r"Failed to resolve '(?P<host>[^']+)'|getaddrinfo (?:ENOTFOUND|EAI_AGAIN) (?P<node>\S+)"
                      r"|Could not resolve host: (?P<curl>[^\s'\"]+)")
_REFUSED = re.compile(r"Connection refused|ECONNREFUSED")
_TIMED_OUT = re.compile(r"ConnectTimeoutError|Read timed out|connect timeout", re.IGNORECASE)
_TLS = re.compile(r"SSLError|CERTIFICATE_VERIFY_FAILED|certificate verify failed")
_QUOTED_TEXT = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_PHASE = re.compile(r"\s*\(phase: [^)]*\)\s*$")
_SPACES = re.compile(r"\s+")


def is_environment(record: Mapping[str, Any]) -> bool:
    """True when the record's failure is the measuring machine's, not the server's."""
    evidence = record.get("environmentEvidence")
    return isinstance(evidence, str) and bool(evidence.strip())


def reason(record: Mapping[str, Any]) -> str:
    """The one-line reason of a record without a number (``""`` for measured and dynamic ones)."""
    if record.get("status") in NUMBERED:
        return ""
    if is_environment(record):
        return decisive(record["environmentEvidence"])
    notes = record.get("notes") or []
    first = next((n for n in notes if isinstance(n, str) and n.strip()), "")
    return decisive(first) if first else str(record.get("status") or "")


def decisive(note: str) -> str:
    """The decisive part of one note, as one line of plain text."""
    text = _SPACES.sub(" ", note).strip()
    quoted = _QUOTED.search(text)
    if quoted:
        return _unquote(quoted.group("quote"), quoted.group("text"))
    network = _network(text)
    if network:
        return network
    return text


def _unquote(quote: str, rest: str) -> str:
    """The text of a ``repr`` from after its opening ``quote`` to its unescaped end."""
    escaped, end = False, len(rest)
    for index, char in enumerate(rest):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == quote:
            end = index
            break
    body = rest[:end]
    try:
        value = ast.literal_eval(quote + body + quote)
    except (ValueError, SyntaxError):
        value = body
    return _SPACES.sub(" ", str(value)).strip() or rest.strip()


def _network(text: str) -> str:
    """A connection failure as a person says it, or ``""``."""
    host = _HOST.search(text)
    where = host.group("host") if host else ""
    resolve = _RESOLVE.search(text)
    if resolve:
        name = resolve.group("host") or resolve.group("node") or resolve.group("curl")
        return f"cannot resolve host {name}"
    if "(Caused by" not in text and "Error(" not in text:
        return ""
    if _REFUSED.search(text):
        return f"connection refused by {where}" if where else "connection refused"
    if _TIMED_OUT.search(text):
        return f"connection to {where} timed out" if where else "connection timed out"
    if _TLS.search(text):
        return f"TLS certificate or handshake failed with {where}" if where else "TLS handshake failed"
    return _innermost(text)


def _innermost(text: str) -> str:
    """The last quoted message inside the innermost ``Caused by`` of an exception chain."""
    inner = _PHASE.sub("", text.rsplit("(Caused by ", 1)[-1])
    quoted = [a or b for a, b in _QUOTED_TEXT.findall(inner) if (a or b).strip()]
    return quoted[-1].strip() if quoted else text
