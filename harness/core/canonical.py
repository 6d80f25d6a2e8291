"""The canonical form: ``stringify`` is JavaScript's ``JSON.stringify``, ``canonical_bytes`` its UTF-8,
``number_to_string`` its Number::toString (``repr(float)`` gives the digits; the layout is done here)
(docs/METHODOLOGY.md, 'What the number is').
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring as _quote
from typing import Any


__all__ = ["canonical_bytes", "number_to_string", "stringify"]

def _digits_and_exponent(x: float) -> tuple[str, int]:
    """``(digits, n)`` of a finite positive double: ECMA-262 Number::toString's ``s`` and ``n``."""
    text = repr(x)
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    n = len(whole) + exponent
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    return digits, n


def number_to_string(x: float) -> str:
    """ECMAScript ``Number::toString(x, 10)`` of a finite double (an int is taken as a double).

    ValueError for NaN and ±Infinity (JSON.stringify prints ``null``); OverflowError for an int beyond
    any double.
    """
    x = float(x)
    if x != x or x in (math.inf, -math.inf):
        raise ValueError(f"{x!r} is not a finite number; JSON.stringify prints null for it")
    if x == 0.0:
        return "0"  # Number::toString step 2: +0 and -0 both print "0"
    if x < 0:
        return "-" + number_to_string(-x)
    # Fast path: below 2**53 an integral double's shortest digits are its exact integer digits.
    # (Above it they are not: 2**60 prints "1152921504606847000", not "...846976".)
    if x < 9007199254740992.0 and x.is_integer():
        return str(int(x))
    digits, n = _digits_and_exponent(x)
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e > 0 else "-"
    if k == 1:
        return f"{digits}e{sign}{abs(e)}"
    return f"{digits[0]}.{digits[1:]}e{sign}{abs(e)}"


_INF = float("inf")
_TWO53 = 9007199254740992.0
_ARRAY_INDEX_MAX = 4294967294  # 2**32 - 2: ECMA-262 "array index"
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def _fix_surrogate(match: re.Match[str]) -> str:
    text = match.group()
    if len(text) == 2:  # a high+low pair held as two code points: JavaScript sees one character
        return chr(0x10000 + ((ord(text[0]) - 0xD800) << 10) + (ord(text[1]) - 0xDC00))
    return f"\\u{ord(text):04x}"  # a lone surrogate: ES2019 well-formed JSON.stringify


def _is_array_index(key: str) -> bool:
    """True for canonical decimal strings of 0 .. 2**32-2 ("0", "10"; not "01")."""
    return (
        key.isascii()
        and key.isdigit()
        and (key == "0" or key[0] != "0")
        and int(key) <= _ARRAY_INDEX_MAX
    )


def _items(obj: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    """``obj``'s pairs in OrdinaryOwnPropertyKeys order: array indices ascending, then insertion order."""
    index_keys = None
    for key in obj:
        if type(key) is not str:
            raise TypeError(f"object keys must be str, not {type(key).__name__}: {key!r}")
        if "0" <= key[:1] <= "9" and _is_array_index(key):
            if index_keys is None:
                index_keys = []
            index_keys.append(key)
    if index_keys is None:
        return obj.items()
    index_keys.sort(key=int)
    indexed = set(index_keys)
    ordered = index_keys + [key for key in obj if key not in indexed]
    return [(key, obj[key]) for key in ordered]


def _number(value: float) -> str:
    if type(value) is int:
        try:
            value = float(value)
        except OverflowError:
            return "null"  # beyond the largest double: JavaScript would hold Infinity
    if value != value or value == _INF or value == -_INF:
        return "null"  # SerializeJSONProperty: a non-finite Number serializes as "null"
    return number_to_string(value)


def _scalar(value: object) -> str:
    """Text of a non-container value; TypeError for any other type."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (float, int)):
        return _number(value)
    raise TypeError(f"cannot serialize {type(value).__name__} as JSON: {value!r}")


def _serialize_iterative(value: Any, gap: str) -> str:
    """Any depth (explicit stack), any ``gap``; text before the surrogate fix-up."""
    parts: list[str] = []
    out = parts.append
    # Each frame: [iterator, is_object, id of container]; ``active`` guards against cycles.
    stack: list[tuple[Iterator[Any], bool, int]] = []
    active: set[int] = set()
    item_sep = ","
    key_sep = ":" if not gap else ": "
    while True:
        # Serialize ``value``; containers with members push a frame and continue with the first.
        t = type(value)
        if t is str:
            out(_quote(value))
        elif t is float:
            out(_float_text(value))
        elif t is dict or t is list or isinstance(value, (dict, list)):
            is_object = isinstance(value, dict)
            members: Iterator[Any] = iter(_items(value) if is_object else value)
            first: Any = next(members, _END)
            if first is _END:
                out("{}" if is_object else "[]")
            else:
                ident = id(value)
                if ident in active:
                    raise ValueError("cannot serialize a cyclic structure (JSON.stringify throws)")
                active.add(ident)
                stack.append((members, is_object, ident))
                out("{" if is_object else "[")
                if gap:
                    out("\n" + gap * len(stack))
                if is_object:
                    out(_quote(first[0]))
                    out(key_sep)
                    value = first[1]
                else:
                    value = first
                continue
        else:
            out(_scalar(value))
        # Advance to the next member, closing every container that has run out.
        while stack:
            members, is_object, ident = stack[-1]
            nxt: Any = next(members, _END)
            if nxt is _END:
                stack.pop()
                active.discard(ident)
                if gap:
                    out("\n" + gap * len(stack))
                out("}" if is_object else "]")
                continue
            out(item_sep if not gap else ",\n" + gap * len(stack))
            if is_object:
                out(_quote(nxt[0]))
                out(key_sep)
                value = nxt[1]
            else:
                value = nxt
            break
        else:
            break
    return "".join(parts)


# Compact serialization, recursive for speed (one Python call per container, not per value).
# Below _RECURSION_DEPTH levels a subtree is handed to the iterative serializer, so depth never
# costs more than ~2 * _RECURSION_DEPTH frames. ``keys`` memoizes '"key":' for keys already seen
# not to be array indices (tools repeat the same few keys thousands of times).
_RECURSION_DEPTH = 64


def _float_text(value: float) -> str:
    if value.is_integer() and -_TWO53 < value < _TWO53:
        return str(int(value))  # exact digits below 2**53; -0.0 prints "0"
    return _number(value)


def _value_text(value: Any, depth: int, keys: dict[str, str]) -> str:
    t = type(value)
    if t is str:
        return _quote(value)
    if t is dict:
        return _dict_text(value, depth + 1, keys)
    if t is list:
        return _list_text(value, depth + 1, keys)
    if t is float:
        return _float_text(value)
    if isinstance(value, dict):
        return _dict_text(value, depth + 1, keys)
    if isinstance(value, list):
        return _list_text(value, depth + 1, keys)
    return _scalar(value)


def _list_text(lst: list[Any], depth: int, keys: dict[str, str]) -> str:
    if depth > _RECURSION_DEPTH:
        return _serialize_iterative(lst, "")
    parts: list[str] = []
    out = parts.append
    for value in lst:
        t = type(value)
        if t is str:
            out(_quote(value))
        elif t is dict:
            out(_dict_text(value, depth + 1, keys))
        elif t is float:
            out(_float_text(value))
        else:
            out(_value_text(value, depth, keys))
    return "[" + ",".join(parts) + "]"


def _dict_text(obj: dict[str, Any], depth: int, keys: dict[str, str]) -> str:
    if depth > _RECURSION_DEPTH:
        return _serialize_iterative(obj, "")
    parts: list[str] = []
    out = parts.append
    for key, value in obj.items():
        quoted = keys.get(key)
        if quoted is None:
            if type(key) is not str:
                raise TypeError(f"object keys must be str, not {type(key).__name__}: {key!r}")
            if "0" <= key[:1] <= "9" and _is_array_index(key):
                return _dict_reordered_text(obj, depth, keys)
            quoted = keys[key] = _quote(key) + ":"
        t = type(value)
        if t is str:
            out(quoted + _quote(value))
        elif t is dict:
            out(quoted + _dict_text(value, depth + 1, keys))
        elif t is list:
            out(quoted + _list_text(value, depth + 1, keys))
        elif value is True:
            out(quoted + "true")
        elif value is False:
            out(quoted + "false")
        elif t is float:
            out(quoted + _float_text(value))
        else:
            out(quoted + _value_text(value, depth, keys))
    return "{" + ",".join(parts) + "}"


def _dict_reordered_text(obj: dict[str, Any], depth: int, keys: dict[str, str]) -> str:
    return "{" + ",".join(
        _quote(key) + ":" + _value_text(value, depth, keys) for key, value in _items(obj)
    ) + "}"


_END = object()


def stringify(value: object, indent: int | None = None) -> str:
    """JavaScript's ``JSON.stringify(value)``, or ``JSON.stringify(value, null, indent)``.

    Accepts dict (str keys), list, str, float, int (as a double; beyond one: ``null``), bool, None; the
    result holds no surrogates. TypeError for other types, ValueError for a cycle.
    """
    gap = ""
    if indent is not None:
        if isinstance(indent, bool) or not isinstance(indent, int):
            raise TypeError(f"indent must be an int or None, not {type(indent).__name__}")
        gap = " " * min(10, indent) if indent >= 1 else ""
    if gap:
        text = _serialize_iterative(value, gap)
    else:
        try:
            text = _value_text(value, 0, {})
        except RecursionError:  # the caller was already deep in the stack
            text = _serialize_iterative(value, "")
    if not text.isascii() and _SURROGATES.search(text):
        text = _SURROGATES.sub(_fix_surrogate, text)
    return text


def canonical_bytes(value: object) -> bytes:
    """UTF-8 of ``stringify(value)``: the bytes hashed, measured and tokenized."""
    return stringify(value).encode("utf-8")
