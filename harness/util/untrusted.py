"""The one path by which untrusted text (anything a server said, anything a catalog entry, client
config or Action input holds) reaches a terminal, a CI log or a published file.

Rules (issue #9, "Server text reaching terminals and CI logs raw" and "Text that is not valid
Unicode crashing output"):

* every character that can move the cursor, rewrite the screen, reorder or hide text is shown as a
  visible escape in Python notation — ``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\x9b``, ``\\u202e``,
  ``\\U000e0041``. That is: C0 controls (U+0000–U+001F), DEL, C1 controls (U+0080–U+009F; U+009B
  is a one-byte CSI to many terminals), every Unicode *format* character (category Cf: bidi
  embeddings, overrides, isolates and marks, zero-width space, word joiner, BOM, tag characters…)
  except the zero-width joiner and non-joiner that emoji and several scripts need, the line and
  paragraph separators (U+2028, U+2029) and lone surrogates (``\\udc80``: ``JSON.parse`` keeps them,
  and writing one to a UTF-8 stream raises). So ANSI CSI, OSC 0 (window title) and OSC 52
  (clipboard) sequences lose their ESC/C1 introducer and are inert;
* so untrusted text can never start a new line, and it can never hold a GitHub Actions workflow
  command: the runner reads ``::name::`` at the start of a line (after leading white space) and the
  legacy ``##[name]`` *anywhere* in a line (``actions/runner``, ``ActionCommand.TryParseV2`` and
  ``TryParse``). :func:`escape` writes ``##[`` as ``#\\x23[`` wherever it occurs; :func:`line`
  additionally writes a leading ``::`` as ``\\x3a:``;
* nothing here raises for any ``str`` (lone surrogates included); other values are ``str()``-ed.

Which function where:

* ``line(text)`` — one whole line printed to a terminal or a CI log. Compose the line first
  (``f"{name}: {status}"``), then pass the whole line: pieces escaped one by one could still join
  into ``::`` or ``##[``.
* ``lines(text)`` — a message of several lines the harness composed (an exception's text).
* ``laid_out(text)`` — text a layout made from pieces already escaped (a ``rich`` table, lines
  ``textwrap`` wrapped): a wrap or a folded cell can bring an untrusted word to the start of a
  line, so each line's leading ``::`` is broken as :func:`line` breaks it. Nothing else changes.
* ``escape(text)`` — a fragment inside a line, a Markdown cell or an annotation; with
  ``spaces=True`` line breaks and tabs become one space each instead (prose in published Markdown,
  where a break would end a table row).
* ``json_text(text)`` — JSON text about to be written to a published file or printed: the
  characters above that ``JSON.stringify`` leaves raw (DEL, C1, format characters, U+2028/U+2029)
  become ``\\uXXXX`` escapes and ``##[`` becomes ``#\\u0023[``; both parse back to the same value,
  so a capture still re-derives byte for byte.
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
    """``text`` with every unsafe character shown as a visible escape and no ``##[`` left (see
    the module docstring). ``spaces``: line breaks and tabs become one space instead of ``\\n``."""
    if not isinstance(text, str):
        text = str(text)
    if spaces:
        text = _BREAKS.sub(" ", text)
    return _UNSAFE.sub(_escape_char, text).replace(LEGACY_COMMAND, "#\\x23[")


def line(text: object) -> str:
    """``escape(text)``, safe as a whole line of a terminal or CI log: a ``::`` at its start
    (after any white space, which the runner trims) is shown as ``\\x3a:``."""
    return _no_command(escape(text))


def laid_out(text: str) -> str:
    """``text`` — laid out by the harness from pieces already escaped, its line breaks the
    layout's own — with a ``::`` at the start of any line (after white space) shown as ``\\x3a:``,
    and nothing else changed (box drawing and colour codes are the harness's)."""
    return "\n".join(_no_command(part) for part in text.split("\n"))


def _no_command(safe: str) -> str:
    body = safe.lstrip()
    if body.startswith(COMMAND_KEY):
        safe = safe[: len(safe) - len(body)] + "\\x3a" + body[1:]
    return safe


def lines(text: object) -> str:
    """A multi-line message (an exception's text) with each of its lines made safe by
    :func:`line`. Its line breaks are kept, so use it only where they are the harness's own (an
    error naming entries one per line), never for what a server said."""
    return "\n".join(line(part) for part in str(text).split("\n"))


def json_text(text: str) -> str:
    """JSON text (as ``JSON.stringify`` or ``json.dumps`` writes it) with every character it
    leaves raw but a terminal or an editor would act on written as a ``\\uXXXX`` escape, and no
    ``##[``. Outside strings JSON text is ASCII without ``#``, so each replacement lands inside a
    string and parses back to the same value. Raises nothing."""
    if text.isascii() and "\x7f" not in text and LEGACY_COMMAND not in text:
        return text  # nothing to escape: skip the per-character scan (megabytes per regen)
    return _JSON_RAW.sub(_json_escape, text).replace(LEGACY_COMMAND, "#\\u0023[")


def _json_escape(match: re.Match) -> str:
    code = ord(match.group(0))
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # an astral character is written as its UTF-16 surrogate pair
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"
