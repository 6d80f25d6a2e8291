"""The one path by which untrusted text reaches a terminal, a CI log or a published file: ``line``
(a whole line), ``lines`` (a message of the harness's own lines), ``laid_out`` (a layout of escaped
pieces), ``escape`` (a fragment), ``json_text`` (JSON text). Rules: docs/SECURITY.md, 'Output:
terminals, CI logs, published files'.
"""

from __future__ import annotations

import re

# Every code point of categories Cc, Cf, Zl, Zp and Cs (Unicode 15.1), minus U+200C/U+200D
# (ZWNJ/ZWJ: they join, they neither reorder nor hide). tests/util/test_untrusted.py checks this
# list against ``unicodedata`` so a newer Python's tables cannot silently widen the gap.
UNSAFE_CHARS = (
    "\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"
)
_UNSAFE = re.compile(f"[{UNSAFE_CHARS}]")
# The subset JSON.stringify leaves raw (it escapes C0 and lone surrogates itself).
_JSON_RAW = re.compile("[\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
                       "\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
                       "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
                       "\U0001d173-\U0001d17a\U000e0000-\U000e007f]")
_BREAKS = re.compile("[\t\n\x0b\x0c\r\x85\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
LEGACY_COMMAND = "##["  # actions/runner ActionCommand.Prefix, matched anywhere in a line
COMMAND_KEY = "::"  # actions/runner ActionCommand._commandKey, matched after TrimStart()


def _escape_char(match: re.Match) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape(text: object, *, spaces: bool = False) -> str:
    """For a fragment; ``spaces`` turns line breaks and tabs into one space."""
    if not isinstance(text, str):
        text = str(text)
    if spaces:
        text = _BREAKS.sub(" ", text)
    return _UNSAFE.sub(_escape_char, text).replace(LEGACY_COMMAND, "#\\x23[")


def line(text: object) -> str:
    """For a whole line: also breaks a leading ``::``."""
    return _no_command(escape(text))


def laid_out(text: str) -> str:
    """For a layout of escaped pieces: breaks a leading ``::`` on every line."""
    return "\n".join(_no_command(part) for part in text.split("\n"))


def _no_command(safe: str) -> str:
    body = safe.lstrip()
    if body.startswith(COMMAND_KEY):
        safe = safe[: len(safe) - len(body)] + "\\x3a" + body[1:]
    return safe


def lines(text: object) -> str:
    """For a message of the harness's own lines."""
    return "\n".join(line(part) for part in str(text).split("\n"))


def json_text(text: str) -> str:
    """For JSON text: the raw characters a terminal acts on become escapes; same parsed value."""
    if text.isascii() and "\x7f" not in text and LEGACY_COMMAND not in text:
        return text  # nothing to escape: skip the per-character scan (megabytes per regen)
    return _JSON_RAW.sub(_json_escape, text).replace(LEGACY_COMMAND, "#\\u0023[")


def _json_escape(match: re.Match) -> str:
    code = ord(match.group(0))
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # an astral character is written as its UTF-16 surrogate pair
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"
