"""JavaScript ``JSON.parse`` semantics on top of the stdlib ``json`` scanner.

The stdlib scanner already matches ECMA-262 "JSON.parse" / ECMA-404 on the grammar (same four
whitespace characters, same string escapes, raw control characters rejected, no leading zeros,
no BOM) and on duplicate keys (a ``dict`` keeps the first key's position and the last value,
which is what CreateDataProperty does). What differs is fixed with hooks:

* numbers: every number becomes a Python ``float`` (an IEEE double, as in JavaScript); integers
  are parsed with ``float()`` too, so ``1`` is ``1.0``, ``-0`` is ``-0.0``, a 5,000-digit integer
  is a double (``int()`` would hit the int max-str-digits limit) and ``1e400`` is ``inf``;
* ``NaN``, ``Infinity`` and ``-Infinity`` are rejected (Python accepts them, JSON.parse does not);
* nesting depth is bounded (see ``MAX_DEPTH``) so hostile input gives a ``WireJSONError`` rather
  than a ``RecursionError`` or a crashed interpreter; text nested deeper than the C scanner can
  recurse (the interpreter's recursion limit, ~1,000 by default) is parsed by an iterative parser
  that uses the stdlib's own string scanner, so it yields the same value.

Lone surrogates, escaped (``"\\ud800"``) or raw in the ``str``, are kept as lone surrogate code
points; an escaped high+low pair becomes one astral character.
"""

from __future__ import annotations

import itertools
import json
import re
from json.decoder import scanstring

__all__ = ["MAX_DEPTH", "WireJSONError", "parse"]

#: Deepest array/object nesting accepted. node's ``JSON.stringify`` itself throws
#: "Maximum call stack size exceeded" a little above 4,000 levels (node 20, default stack), so
#: nothing deeper has a canonical form. The stdlib scanner recurses in C (~400 bytes of C stack a
#: level), and is never handed text nested deeper than this, so it stays well inside an ordinary
#: thread stack even when the interpreter's recursion limit has been raised.
MAX_DEPTH = 4096


class WireJSONError(ValueError):
    """Text that JavaScript's ``JSON.parse`` would reject (or that nests deeper than ``MAX_DEPTH``).

    Attributes: ``reason`` (what is wrong), ``pos`` (0-based offset in code points, or ``None``),
    ``lineno`` and ``colno`` (1-based, or ``None``).
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


def _reject_constant(name: str):
    raise _Constant(name)


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
    """Deepest ``[``/``{`` nesting outside string tokens (exact for valid JSON text)."""
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, skeleton)), default=0)


def _syntax_error(text: str, msg: str, pos: int) -> WireJSONError:
    """A WireJSONError from the stdlib's wording ("Expecting value", "Invalid control character
    at", ...), with a hint for the one rejection people trip over: a leading BOM."""
    reason = msg.removesuffix(" at")
    if pos == 0 and text.startswith("\ufeff"):
        reason += " (a leading U+FEFF byte-order mark is not JSON whitespace)"
    return WireJSONError(reason, text, pos)


def _constant_error(text: str, name: str, pos: int | None) -> WireJSONError:
    return WireJSONError(
        f"{name} is not a JSON value (JSON.parse rejects NaN and Infinity)", text, pos
    )


def _decode_c(text: str):
    """The stdlib C scanner with JavaScript hooks. Recursive: may raise ``RecursionError``."""
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise _syntax_error(text, exc.msg, exc.pos) from None
    except _Constant as exc:
        pos = next((m.start(1) for m in _CONSTANT_OR_STRING.finditer(text) if m.group(1)), None)
        raise _constant_error(text, exc.name, pos) from None


def _decode_iterative(text: str):
    """Same grammar and result as ``_decode_c`` with an explicit stack, bounded by ``MAX_DEPTH``.

    Strings go through the stdlib's own ``scanstring`` so escapes behave identically.
    """
    ws = _WS.match
    pos = ws(text, 0).end()
    stack: list[list] = []  # [container, pending key or None]

    def fail(reason: str, at: int):
        return _syntax_error(text, reason, at)

    def read_key(at: int) -> tuple[str, int]:
        at = ws(text, at).end()
        if text[at : at + 1] != '"':
            raise fail("Expecting property name enclosed in double quotes", at)
        key, at = scanstring(text, at + 1, True)
        at = ws(text, at).end()
        if text[at : at + 1] != ":":
            raise fail("Expecting ':' delimiter", at)
        return key, at + 1

    try:
        while True:
            # A value starts at pos (after optional whitespace).
            pos = ws(text, pos).end()
            ch = text[pos : pos + 1]
            if ch == "{" or ch == "[":
                if len(stack) >= MAX_DEPTH:
                    raise fail(
                        f"nesting deeper than {MAX_DEPTH} levels; node's JSON.stringify "
                        "cannot serialize it, so it has no canonical form",
                        pos,
                    )
                after = ws(text, pos + 1).end()
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
                    pos = ws(text, pos).end()
                    if pos != len(text):
                        raise fail("Extra data", pos)
                    return value
                frame = stack[-1]
                container = frame[0]
                if frame[1] is None:
                    container.append(value)
                else:
                    container[frame[1]] = value
                pos = ws(text, pos).end()
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
    """Parse JSON text exactly as JavaScript's ``JSON.parse(text)`` would.

    Shape of the result: ``dict`` (str keys, duplicate keys first-position/last-value), ``list``,
    ``str`` (may hold lone surrogates), ``float`` for every number (``inf``/``-inf`` where the
    literal overflows a double, ``-0.0`` for ``-0``), ``bool``, ``None``.

    Rule source: ECMA-262 "JSON.parse" (grammar of ECMA-404; "InternalizeJSONProperty" without a
    reviver; numbers via "StringToNumber", i.e. round-to-nearest doubles).

    Raises ``WireJSONError`` (a ``ValueError``) with what is wrong and where: any syntax JSON.parse
    rejects (including a leading BOM, ``NaN``/``Infinity``, trailing commas, comments), or nesting
    deeper than ``MAX_DEPTH`` levels. Never lets a ``RecursionError`` out: input deeper than the
    stdlib scanner can recurse is parsed again by an iterative parser with the same grammar.
    Raises ``TypeError`` if ``text`` is not a ``str``.
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
