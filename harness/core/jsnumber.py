"""ECMAScript Number::toString(10) for Python floats.

The canonical form prints every number the way JavaScript's ``JSON.stringify`` does, which is
``Number::toString`` with radix 10 (ECMA-262, "Number::toString (x, radix)", and
"SerializeJSONProperty" step for finite Numbers). Python's ``repr(float)`` already produces the
shortest decimal digits that round-trip to the same double — the digits ECMA-262 asks for — so
only the layout (where the decimal point goes, when to use an exponent) is done here.
"""

from __future__ import annotations

import math

__all__ = ["number_to_string"]


def _digits_and_exponent(x: float) -> tuple[str, int]:
    """Split a finite, positive, non-zero double into ``(digits, n)``.

    ``digits`` is the shortest round-trip decimal significand without leading or trailing zeros
    (``k = len(digits)``) and ``n`` is the decimal exponent such that
    ``x == int(digits) * 10 ** (n - k)`` — the ``s``, ``k`` and ``n`` of ECMA-262 Number::toString
    step 5.
    """
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
    """Return the ECMAScript ``Number::toString(x, 10)`` text of a finite double.

    Shape: ``x`` is a Python ``float`` (an ``int`` is converted with ``float(x)`` first, as
    JavaScript would hold it as a double); the result is ASCII text such as ``"1"``,
    ``"0.000001"``, ``"1e-7"``, ``"1e+21"``, ``"1.23e-18"``, ``"5e-324"``. Both zeros print ``"0"``.

    Rule source: ECMA-262 "Number::toString (x, radix)" — shortest round-trip digits ``s`` of
    length ``k`` with decimal exponent ``n``; plain digits when ``k <= n <= 21``, a decimal point
    inside the digits when ``0 < n <= 21``, a ``0.000…`` prefix when ``-6 < n <= 0``, otherwise
    exponent form ``d[.ddd]e±N``.

    Raises ``ValueError`` for NaN and ±Infinity: those are not JSON numbers, and
    ``JSON.stringify`` (``harness.core.canonical.stringify``) prints ``null`` for them instead.
    Raises ``OverflowError`` for an ``int`` too large to be a double.
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
