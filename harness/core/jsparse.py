"""``parse``: JavaScript's ``JSON.parse`` on the stdlib scanner. Every number is a float; NaN and
Infinity are rejected; nesting is bounded by ``MAX_DEPTH`` and never recurses past Python's limit.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["MAX_DEPTH", "WireJSONError", "parse"]

#: Deepest array/object nesting accepted. node's ``JSON.stringify`` itself throws
#: "Maximum call stack size exceeded" a little above 4,000 levels (node 20, default stack), so
#: nothing deeper has a canonical form. The stdlib scanner recurses in C (~400 bytes of C stack a
#: level), and is never handed text nested deeper than this, so it stays well inside an ordinary
#: thread stack even when the interpreter's recursion limit has been raised.
MAX_DEPTH = 4096


class WireJSONError(ValueError):
    """Text ``JSON.parse`` rejects, or nested deeper than ``MAX_DEPTH``; ``reason``, ``pos``, ``lineno``,
    ``colno`` say what and where.
    """

    def __init__(self, reason: str, text: str | None = None, pos: int | None = None):
        self.reason = reason
        self.pos = pos
        self.lineno = self.colno = None
        where = ""
        if text is not None and pos is not None:
            self.lineno = text.count("\n", 0, pos) + 1
            self.colno = pos - text.rfind("\n", 0, pos)
            where = f" at line {self.lineno} column {self.colno} (char {pos})"
        super().__init__(f"invalid JSON: {reason}{where}")


class _Constant(Exception):
    def __init__(self, name: str):
        self.name = name


def _reject_constant(name: str) -> None:
    raise _Constant(name)


# The stdlib's string scanner (C when available): public in CPython, absent from typeshed.
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

_DECODER = json.JSONDecoder(parse_float=float, parse_int=float, parse_constant=_reject_constant)

_WS = re.compile(r"[ \t\n\r]*")
# ECMA-404 number; [0-9] rather than \d, which would also match other scripts' digits.
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_CONSTANT = re.compile(r"-?Infinity|NaN")
# A JSON string token, for skipping strings when scanning raw text. An unterminated one runs to
# the end of the text, so a match from a quote never fails: scanning stays linear even on hostile
# text such as '"\\"\\"\\"...' (a pattern that could fail would be retried at every later quote).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_CONSTANT_OR_STRING = re.compile(_STRING.pattern + r"|(-?Infinity|NaN)", re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _max_depth(text: str) -> int:
    """Deepest ``[``/``{`` nesting outside strings (exact for valid JSON)."""
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, skeleton)), default=0)


def _syntax_error(text: str, msg: str, pos: int) -> WireJSONError:
    """A WireJSONError in the stdlib's wording, with a hint for a leading BOM."""
    reason = msg.removesuffix(" at")
    if pos == 0 and text.startswith("\ufeff"):
        reason += " (a leading U+FEFF byte-order mark is not JSON whitespace)"
    return WireJSONError(reason, text, pos)


def _constant_error(text: str, name: str, pos: int | None) -> WireJSONError:
    return WireJSONError(
        f"{name} is not a JSON value (JSON.parse rejects NaN and Infinity)", text, pos
    )


def _decode_c(text: str) -> Any:
    """The stdlib C scanner with JavaScript hooks; may raise RecursionError."""
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise _syntax_error(text, exc.msg, exc.pos) from None
    except _Constant as exc:
        pos = next((m.start(1) for m in _CONSTANT_OR_STRING.finditer(text) if m.group(1)), None)
        raise _constant_error(text, exc.name, pos) from None


def _decode_iterative(text: str) -> Any:
    """``_decode_c``'s grammar and result on an explicit stack, bounded by ``MAX_DEPTH``."""
    def ws(at: int) -> int:
        match = _WS.match(text, at)
        return match.end() if match else at  # the pattern matches the empty string: never None

    pos = ws(0)
    stack: list[list[Any]] = []  # [container, pending key or None]
    value: Any

    def fail(reason: str, at: int) -> WireJSONError:
        return _syntax_error(text, reason, at)

    def read_key(at: int) -> tuple[str, int]:
        at = ws(at)
        if text[at : at + 1] != '"':
            raise fail("Expecting property name enclosed in double quotes", at)
        key, at = scanstring(text, at + 1, True)
        at = ws(at)
        if text[at : at + 1] != ":":
            raise fail("Expecting ':' delimiter", at)
        return key, at + 1

    try:
        while True:
            # A value starts at pos (after optional whitespace).
            pos = ws(pos)
            ch = text[pos : pos + 1]
            if ch == "{" or ch == "[":
                if len(stack) >= MAX_DEPTH:
                    raise fail(
                        f"nesting deeper than {MAX_DEPTH} levels; node's JSON.stringify "
                        "cannot serialize it, so it has no canonical form",
                        pos,
                    )
                after = ws(pos + 1)
                closer = "}" if ch == "{" else "]"
                if text[after : after + 1] == closer:
                    value, pos = ({} if ch == "{" else []), after + 1
                elif ch == "{":
                    key, pos = read_key(pos + 1)
                    stack.append([{}, key])
                    continue
                else:
                    stack.append([[], None])
                    pos = after
                    continue
            elif ch == '"':
                value, pos = scanstring(text, pos + 1, True)
            elif text.startswith("null", pos):
                value, pos = None, pos + 4
            elif text.startswith("true", pos):
                value, pos = True, pos + 4
            elif text.startswith("false", pos):
                value, pos = False, pos + 5
            else:
                match = _NUMBER.match(text, pos)
                if match is None:
                    constant = _CONSTANT.match(text, pos)
                    if constant is not None:
                        raise _constant_error(text, constant.group(), pos)
                    raise fail("Expecting value", pos)
                value, pos = float(match.group()), match.end()
            # A complete value: attach it, closing every container it completes.
            while True:
                if not stack:
                    pos = ws(pos)
                    if pos != len(text):
                        raise fail("Extra data", pos)
                    return value
                frame = stack[-1]
                container = frame[0]
                if frame[1] is None:
                    container.append(value)
                else:
                    container[frame[1]] = value
                pos = ws(pos)
                ch = text[pos : pos + 1]
                if ch == ",":
                    if frame[1] is not None:
                        frame[1], pos = read_key(pos + 1)
                    else:
                        pos += 1
                    break
                if ch == ("]" if frame[1] is None else "}"):
                    stack.pop()
                    value, pos = container, pos + 1
                    continue
                raise fail("Expecting ',' delimiter", pos)
    except json.JSONDecodeError as exc:
        raise _syntax_error(text, exc.msg, exc.pos) from None


def parse(text: str) -> object:
    """``JSON.parse(text)``: dict, list, str (lone surrogates kept), float, bool or None.

    WireJSONError for anything JSON.parse rejects or nesting deeper than ``MAX_DEPTH``; TypeError for a
    non-str ``text``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() takes a str, not {type(text).__name__}")
    # Every '[' and '{' (in strings or not) bounds the nesting from above; only when that bound
    # is over the limit is the real depth measured. The recursive C scanner therefore never
    # sees more than MAX_DEPTH levels, whatever the interpreter's recursion limit is.
    if text.count("[") + text.count("{") > MAX_DEPTH and _max_depth(text) > MAX_DEPTH:
        return _decode_iterative(text)  # raises at the first error or the first level too deep
    try:
        return _decode_c(text)
    except RecursionError:
        return _decode_iterative(text)
