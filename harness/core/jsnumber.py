"""``number_to_string``: ECMAScript Number::toString(10) for Python floats (the numbers of the canonical
form). ``repr(float)`` already gives the shortest round-trip digits; only the layout is done here.
"""

from __future__ import annotations

import math

__all__ = ["number_to_string"]


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
