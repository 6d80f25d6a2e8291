"""ECMAScript Number::toString(10) against node, for tricky doubles."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.canonical import stringify
from harness.core.canonical import number_to_string
from tests.core.node_oracle import oracle

TRICKY = [
    0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.1 + 0.2, 0.5, 4.35, 1 / 3, 2 / 3, 100.0, 123456.789,
    1e-7, -1e-7, 1.5e-7, 1e-6, 1.5e-6, 0.000001, 0.0000015, 1e-5, 1.2345e-5, 5e-7, 2.5e-7,
    123e-20, 1e-300, 5e-324, 1e-323, 3 * 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
    1.7976931348623157e308, 1.5e300,
    1e15, 1e16, 1.5e16, 1e20, 1e21, -1e21, 1.5e21, 1e22, 1e23, 9.999999999999999e22,
    999999999999999900000.0, 999999999999999999999.0, 1234567890123456789012.0,
    float(2**31), float(2**32 - 1), float(2**32), float(2**53 - 1), float(2**53), float(2**53 + 2),
    float(9007199254740993), float(2**60), float(2**64), 12345678901234567890.0,
    3.141592653589793, 2.718281828459045, 1.0000000000000002, 0.9999999999999999,
    1e-4, 1.1e-4, 0.001, 0.01, 1.25, 100.5, 1e2, 1e100, 1.7e-7, 9.5e-7, 6.02214076e23,
]

EXPECTED = {
    1.0: "1", -0.0: "0", 1e21: "1e+21", 1e-7: "1e-7", 0.000001: "0.000001", 123e-20: "1.23e-18",
    5e-324: "5e-324", 1e20: "100000000000000000000", float(2**60): "1152921504606847000",
    1.5e-7: "1.5e-7", 1.7976931348623157e308: "1.7976931348623157e+308", 0.1 + 0.2:
    "0.30000000000000004", -1.5e21: "-1.5e+21",
}


def test_known_spellings() -> None:
    for value, text in EXPECTED.items():
        assert number_to_string(value) == text, value


@pytest.mark.node
def test_tricky_numbers_match_node() -> None:
    values = TRICKY + [-v for v in TRICKY]
    wire = "[" + ",".join(repr(v) for v in values) + "]"
    node_out = oracle().ask(wire)[1:-1].split(",")
    ours = [number_to_string(v) for v in values]
    assert ours == node_out
    assert stringify(values) == "[" + ",".join(node_out) + "]"


@pytest.mark.node
@settings(max_examples=500, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    # uniformly random bit patterns reach every exponent, not just "nice" values
    st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0])
    .filter(math.isfinite),
))
def test_random_doubles_match_node(value: float) -> None:
    assert number_to_string(value) == oracle().ask(repr(value))


def test_ints_are_doubles() -> None:
    assert number_to_string(2**53 + 1) == "9007199254740992"
    assert number_to_string(10**21) == "1e+21"
    assert stringify([2**53 + 1, 10**400, True, 0]) == "[9007199254740992,null,true,0]"
    with pytest.raises(OverflowError):
        number_to_string(10**400)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_is_not_a_number_here(value: float) -> None:
    with pytest.raises(ValueError):
        number_to_string(value)
    assert stringify([value]) == "[null]"
