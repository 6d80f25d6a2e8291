"""The one path by which untrusted text (anything a server said, anything a catalog entry, client
config or Action input holds) reaches a terminal, a CI log or a one-line published field.

Rules (issue #9, "Server text reaching terminals and CI logs raw"):
  * every control character — C0 (including CR, LF and TAB), DEL, C1 — every bidirectional
    override/isolate/mark, the Unicode line and paragraph separators and any lone surrogate is
    shown as a visible escape (``\\n``, ``\\x1b``, ``\\u202e``, ``\\udc80``), never emitted raw;
  * so no untrusted text can start a new line, and ``line`` additionally makes sure a line that
    begins with untrusted text cannot be read by a GitHub runner as a workflow command
    (``::error …``): a leading ``::`` is shown as ``\\x3a:``.

Nothing here raises for any ``str`` (lone surrogates included); non-strings are ``str()``-ed first.
"""

from __future__ import annotations

import re

# Bidi embedding/override/isolate controls and marks (Unicode TR9), line/paragraph separators, and
# other invisible format characters an attacker can use to reorder or hide what a reader sees.
_FORMAT = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
_UNSAFE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_FORMAT}\\ud800-\\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(match: re.Match) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: object) -> str:
    """``text`` with every unsafe character replaced by a visible escape (see module doc)."""
    if not isinstance(text, str):
        text = str(text)
    return _UNSAFE.sub(_escape_char, text)


def line(text: object) -> str:
    """``escape(text)``, safe to print at the start of a line: a leading ``::`` (after spaces) —
    a GitHub Actions workflow command — is shown as ``\\x3a:``."""
    safe = escape(text)
    stripped = safe.lstrip(" ")
    if stripped.startswith("::"):
        safe = safe[: len(safe) - len(stripped)] + "\\x3a" + stripped[1:]
    return safe
