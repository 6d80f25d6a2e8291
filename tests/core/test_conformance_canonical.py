"""The canonical form against the conformance cases (node's output, byte for byte).

Cases live in tests/conformance (see its README.md): adversarial/ (wire
text and node's canonical string), adversarial-invalid/ (wire text node rejects) and published/
(real captures with their published canonicalSha256 and canonicalLength).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from harness.core import jsparse
from harness.core.canonical import canonical_bytes, stringify
from harness.core.jsparse import WireJSONError, parse

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"


def _cases(group: str) -> list[Path]:
    folder = CONFORMANCE / group
    found = sorted(folder.glob("*.json"))
    if not found:  # fail loudly at collection: a missing folder must not pass as "0 tests"
        raise RuntimeError(f"no conformance cases in {folder}")
    return found


ADVERSARIAL = _cases("adversarial")
INVALID = _cases("adversarial-invalid")
PUBLISHED = _cases("published")


def _case(path: Path) -> dict:
    # The case files themselves are read with the stdlib: they are ordinary JSON written by node.
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", ADVERSARIAL, ids=lambda p: p.stem)
def test_adversarial_canonical(path: Path) -> None:
    case = _case(path)
    text = stringify(parse(case["wire"]))
    assert text == case["canonical"]
    data = text.encode("utf-8")
    assert hashlib.sha256(data).hexdigest() == case["canonicalSha256"]
    assert len(data) == case["canonicalLength"]


@pytest.mark.parametrize("path", ADVERSARIAL, ids=lambda p: p.stem)
def test_adversarial_iterative_parser_agrees(path: Path) -> None:
    # The fallback parser (used past the C scanner's recursion) must give the same value.
    case = _case(path)
    assert stringify(jsparse._decode_iterative(case["wire"])) == case["canonical"]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_adversarial_invalid_rejected(path: Path) -> None:
    case = _case(path)
    with pytest.raises(WireJSONError):
        parse(case["wire"])
    with pytest.raises(WireJSONError):
        jsparse._decode_iterative(case["wire"])


def _length_unit(record: dict) -> str:
    """canonicalLength is UTF-8 bytes (conformance README), except where the case documents
    otherwise: fixture-basic's source note says its own field counts UTF-16 code units."""
    note = (record.get("source") or {}).get("note") or ""
    return "utf-16" if "UTF-16 code units" in note else "utf-8"


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.stem)
def test_published_capture(path: Path) -> None:
    record = parse(path.read_text(encoding="utf-8"))
    expected = record["expected"]
    text = stringify(record["capture"])
    data = canonical_bytes(record["capture"])
    assert data == text.encode("utf-8")
    assert hashlib.sha256(data).hexdigest() == expected["canonicalSha256"]
    if _length_unit(record) == "utf-16":
        assert len(text.encode("utf-16-le")) // 2 == expected["canonicalLength"]
    else:
        assert len(data) == expected["canonicalLength"]


def test_fixture_basic_length_units_agree() -> None:
    # The one UTF-16-counted record is pure ASCII, so both units give the same number.
    (path,) = [p for p in PUBLISHED if p.name.startswith("fixture-basic__")]
    record = parse(path.read_text(encoding="utf-8"))
    assert _length_unit(record) == "utf-16"
    text = stringify(record["capture"])
    assert text.isascii()
    assert len(text.encode("utf-8")) == record["expected"]["canonicalLength"]


# --- depth -----------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1000, 2000, jsparse.MAX_DEPTH])
def test_deep_nesting_round_trips(depth: int) -> None:
    for opener, closer, inner in (("[", "]", "0"), ('{"a":', "}", "0")):
        wire = opener * depth + inner + closer * depth
        assert stringify(parse(wire)) == wire


@pytest.mark.parametrize("depth", [jsparse.MAX_DEPTH + 1, 1_000_000])
def test_hostile_depth_is_a_wire_error(depth: int) -> None:
    for wire in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        with pytest.raises(WireJSONError, match="nesting deeper than"):
            parse(wire)


def test_deep_input_unbalanced_is_a_wire_error() -> None:
    with pytest.raises(WireJSONError):
        parse("[" * 5000)
    with pytest.raises(WireJSONError):
        parse("[" * 2000 + "]" * 1999)


def test_depth_counted_outside_strings_only() -> None:
    # 10,000 brackets inside a string are not nesting.
    wire = json.dumps(["[" * 10_000, {"k": "{" * 10_000}])
    assert stringify(parse(wire)) == wire.replace(", ", ",").replace(": ", ":")


def test_depth_scan_is_linear_on_hostile_strings() -> None:
    # Over MAX_DEPTH brackets inside an unterminated string full of escaped quotes: a string
    # pattern that can fail would be retried at every quote (quadratic). The string pattern matches
    # once, from the opening quote to the end, whatever follows.
    from harness.core import jsparse

    wire = '["' + "[" * 5000 + '\\"' * 400_000
    with pytest.raises(WireJSONError, match="Unterminated string"):
        parse(wire)
    spans = [m.span() for m in jsparse._STRING.finditer(wire)]
    assert spans == [(1, len(wire))]


def test_deep_parse_with_raised_recursion_limit() -> None:
    # Even with a large recursion limit the C scanner is never handed more than MAX_DEPTH levels.
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(2_000_000)
    try:
        with pytest.raises(WireJSONError):
            parse("[" * 1_000_000 + "]" * 1_000_000)
    finally:
        sys.setrecursionlimit(old)


def test_recursion_limit_untouched() -> None:
    old = sys.getrecursionlimit()
    parse("[" * 3000 + "]" * 3000)
    assert sys.getrecursionlimit() == old


def test_stringify_deeper_than_parse_allows() -> None:
    value: list = []
    for _ in range(100_000):
        value = [value]
    text = stringify(value)
    assert text == "[" * 100_001 + "]" * 100_001


# --- errors ----------------------------------------------------------------------------------


def test_wire_error_says_what_and_where() -> None:
    with pytest.raises(WireJSONError) as info:
        parse('[1,\n NaN]')
    err = info.value
    assert isinstance(err, ValueError)
    assert "NaN" in str(err) and "line 2 column 2" in str(err)
    assert (err.lineno, err.colno, err.pos) == (2, 2, 5)


def test_parse_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        parse(b"[]")  # type: ignore[arg-type]


def test_stringify_rejects_unsupported() -> None:
    with pytest.raises(TypeError):
        stringify({1: "a"})
    with pytest.raises(TypeError):
        stringify((1, 2))
    with pytest.raises(TypeError):
        stringify({"a": object()})
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="cyclic"):
        stringify(cyclic)
    cyclic_dict: dict = {}
    cyclic_dict["self"] = cyclic_dict
    with pytest.raises(ValueError, match="cyclic"):
        stringify(cyclic_dict, indent=2)
