"""Property: ``stringify(parse(wire))`` equals node's ``JSON.stringify(JSON.parse(wire))``.

Hypothesis generates JSON *text* (not Python values), leaning on the traps: duplicate keys,
integer-like keys, number spellings, escapes, lone surrogates (as ``\\uXXXX`` escapes, so the text
survives UTF-8 on its way to node), U+2028/U+2029, control characters, non-ASCII and nesting. A
second property feeds token soup that is often invalid: we must reject exactly what node rejects.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core import jsparse
from harness.core.canonical import (
    _SURROGATES,
    _fix_surrogate,
    _serialize_iterative,
    stringify,
)
from harness.core.jsparse import WireJSONError, parse
from tests.core.node_oracle import NodeError, oracle

SETTINGS = settings(max_examples=2000, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

WS = st.sampled_from(["", "", "", " ", "\n", "\t", "\r\n  ", "  "])

# --- numbers -----------------------------------------------------------------------------------

NUMBER_LITERALS = [
    "0", "-0", "1", "1.0", "-1.5", "1e21", "1E21", "1e+21", "1e-7", "1e-6", "0.000001", "1e-5",
    "123e-20", "5e-324", "2e-324", "5E-324", "1e400", "-1e400", "1.7976931348623157e308",
    "1.7976931348623159e308", "9007199254740993", "9007199254740992", "18014398509481985",
    "4294967295", "4294967296", "0.1", "0.30000000000000004", "3.14159265358979323846264338327950",
    "1.00000000000000000000000000001", "100000000000000000000", "999999999999999999999",
    "1000000000000000000000", "12345678901234567890123456789", "0e0", "-0.0", "0.0e-0", "1E+2",
    "2.5e-7", "1.5e300", "1" + "0" * 308, "9" * 309, "1" + "0" * 400, "0." + "0" * 30 + "1",
]

digits = st.text("0123456789", min_size=1, max_size=25)
int_part = st.one_of(st.just("0"), st.builds(lambda a, b: a + b, st.sampled_from("123456789"),
                                             st.text("0123456789", max_size=24)))
generated_number = st.builds(
    lambda sign, whole, frac, exp: sign + whole + frac + exp,
    st.sampled_from(["", "", "-"]),
    int_part,
    st.one_of(st.just(""), digits.map(lambda d: "." + d)),
    st.one_of(st.just(""), st.builds(lambda e, s, d: e + s + d, st.sampled_from("eE"),
                                     st.sampled_from(["", "+", "-"]),
                                     st.text("0123456789", min_size=1, max_size=3))),
)
float_repr = st.floats(allow_nan=False, allow_infinity=False).map(repr)
NUMBER = st.one_of(st.sampled_from(NUMBER_LITERALS), generated_number, float_repr,
                   st.integers(-(2**70), 2**70).map(str))

# --- strings -----------------------------------------------------------------------------------

SURROGATE_ESCAPES = ["\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\uD83D", "\\uDE00",
                     "\\ud83d\\ude00", "\\ude00\\ud83d", "\\ud83d\\ud83d\\ude00", "\\uD83D\\uDE00"]
ESCAPES = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000", "\\u001f",
           "\\u007f", "\\u007F", "\\u2028", "\\u2029", "\\u00e9", "\\u0041", "\\ufeff", "\\u0085"]
RAW = ["\u2028", "\u2029", "\x7f", "/", "é", "中文", "😀", "👨‍👩‍👧", "\ufeff", "\u0085", "\u00a0",
       "<|endoftext|>", "e\u0301", "\ue000", "𝔘", "'", "<script>", "\u200b"]
# Any code point but the ones a raw JSON string cannot hold: '"', '\\', controls, surrogates.
plain = st.text(st.characters(blacklist_categories=("Cs",), min_codepoint=0x20,
                              blacklist_characters='"\\'), max_size=12)
unicode_escape = st.integers(0, 0xFFFF).flatmap(
    lambda u: st.sampled_from([f"\\u{u:04x}", f"\\u{u:04X}"]))
STRING_PIECE = st.one_of(plain, st.sampled_from(ESCAPES), st.sampled_from(SURROGATE_ESCAPES),
                         st.sampled_from(RAW), unicode_escape)
STRING = st.lists(STRING_PIECE, max_size=4).map(lambda parts: '"' + "".join(parts) + '"')

KEYS = ["0", "1", "2", "9", "10", "01", "00", "-1", "1.5", "1e3", " 1", "1 ", "+1",
        "4294967294", "4294967295", "4294967296", "18446744073709551616", "", "a", "b", "name",
        "description", "type", "__proto__", "constructor", "toString", "length", "\\u0030",
        "\\ud800", "😀", "é"]
KEY = st.one_of(st.sampled_from(KEYS).map(lambda k: f'"{k}"'), STRING)

# --- values ------------------------------------------------------------------------------------

SCALAR = st.one_of(NUMBER, STRING, st.sampled_from(["true", "false", "null"]))


def _array(parts: tuple[str, list[str]]) -> str:
    ws, items = parts
    return "[" + ws + (ws + "," + ws).join(items) + ws + "]"


def _object(parts: tuple[str, list[tuple[str, str]]]) -> str:
    ws, members = parts
    return "{" + ws + (ws + "," + ws).join(k + ws + ":" + ws + v for k, v in members) + ws + "}"


def _extend(children):
    # One whitespace choice per container keeps the number of draws (and generation time) low.
    return st.one_of(
        st.tuples(WS, st.lists(children, max_size=5)).map(_array),
        st.tuples(WS, st.lists(st.tuples(KEY, children), max_size=6)).map(_object),
        st.tuples(WS, st.lists(st.tuples(DUP_KEY, children), max_size=8)).map(_object),
    )


DUP_KEY = st.sampled_from(KEYS[:8]).map(lambda k: f'"{k}"')  # a small pool: many duplicates
VALUE = st.recursive(SCALAR, _extend, max_leaves=12)
# Now and then a deep chain of arrays/objects (up to 120 levels: past the recursive serializer's
# hand-off to its iterative path) around a scalar.
DEEP = st.builds(lambda n, obj, v: ('{"k":' * n + v + "}" * n) if obj else ("[" * n + v + "]" * n),
                 st.integers(1, 120), st.booleans(), SCALAR)
WIRE = st.builds(lambda a, v, b: a + v + b, WS, st.one_of(VALUE, VALUE, VALUE, DEEP), WS)


@pytest.mark.slow
@pytest.mark.node
@SETTINGS
@given(WIRE)
def test_stringify_parse_matches_node(wire: str) -> None:
    expected = oracle().ask(wire)
    value = parse(wire)
    assert stringify(value) == expected
    # The internal paths must agree too: the iterative parser and serializer are what deep input
    # falls back to.
    assert stringify(jsparse._decode_iterative(wire)) == expected
    assert _SURROGATES.sub(_fix_surrogate, _serialize_iterative(value, "")) == expected


@pytest.mark.slow
@pytest.mark.node
@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(WIRE, st.integers(-2, 12))
def test_indented_stringify_matches_node(wire: str, indent: int) -> None:
    assert stringify(parse(wire), indent=indent) == oracle().ask(wire, indent=indent)


# --- invalid and near-valid text ---------------------------------------------------------------

SOUP_TOKENS = ["[", "]", "{", "}", ",", ":", '"a"', '"k"', "1", "-", "01", "1.", ".5", "+1",
               "1e", "1e+", "0x1", "NaN", "Infinity", "-Infinity", "true", "tru", "null", "nul",
               "'a'", '"\\x"', '"\\u12"', '"\\u12g4"', '"\n"', '"\t"', '"\\ud800"', "\u00a0",
               "\u2028", "\ufeff", "//c", "/*c*/", " ", "\n", "\u0661", "\\", '"']


@pytest.mark.slow
@pytest.mark.node
@settings(max_examples=400, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.lists(st.sampled_from(SOUP_TOKENS), min_size=1, max_size=10).map("".join),
    # valid text with one token spliced in
    st.tuples(WIRE, st.sampled_from(SOUP_TOKENS), st.floats(0, 1)).map(
        lambda t: t[0][: int(len(t[0]) * t[2])] + t[1] + t[0][int(len(t[0]) * t[2]):]),
))
def test_accepts_exactly_what_node_accepts(wire: str) -> None:
    try:
        expected = oracle().ask(wire)
    except NodeError:
        with pytest.raises(WireJSONError):
            parse(wire)
        with pytest.raises(WireJSONError):
            jsparse._decode_iterative(wire)
        return
    assert stringify(parse(wire)) == expected
    assert stringify(jsparse._decode_iterative(wire)) == expected
