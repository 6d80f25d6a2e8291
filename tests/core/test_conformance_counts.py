"""count_tools against the conformance cases (published captures and adversarial traps).

Expected numbers come from node (JSON) and python tiktoken o200k_base; see
tests/conformance/README.md. Per-tool values are also checked against a direct, obviously-correct
reference (every string counted on its own), which is what count_tools' span sharing must equal.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.canonical import stringify
from harness.core.counting import UNNAMED, count_tools, js_truthy, session_start_load
from harness.core.jsparse import parse
from harness.core.tokenizer import count

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
PUBLISHED = sorted((CONFORMANCE / "published").glob("*.json"))
ADVERSARIAL = sorted((CONFORMANCE / "adversarial").glob("*.json"))


def _files(found: list[Path]) -> list:
    # An absent conformance folder must fail, not silently collect zero cases.
    return found or [pytest.param(None, id="MISSING")]


def _load(path: Path | None) -> dict:
    if path is None:
        pytest.fail(f"conformance cases not found under {CONFORMANCE}")
    return parse(path.read_text(encoding="utf-8"))


def _reference_tool(tool) -> dict:
    """Per-tool numbers computed the plain way (README rules; our rule for non-string descriptions)."""
    props = tool if isinstance(tool, dict) else {}
    name = props.get("name")
    desc, schema = props.get("description"), props.get("inputSchema")
    if js_truthy(desc):
        desc_tokens = count(desc) if isinstance(desc, str) else count(stringify(desc))
    else:
        desc_tokens = 0
    return {"name": UNNAMED if name is None else name, "tokens": count(stringify(tool)),
            "descriptionTokens": desc_tokens,
            "inputSchemaTokens": count(stringify(schema)) if js_truthy(schema) else 0}


def _strip(tools: list[dict]) -> list[dict]:
    return [{k: v for k, v in t.items() if k != "divergence"} for t in tools]


def _assert_tools(ours: list[dict], expected: list) -> None:
    assert _strip(ours) == expected
    # == treats False as 0; the JSON texts do not (name false stays false, name 0 stays 0).
    assert stringify(_strip(ours)) == stringify(expected)


@pytest.mark.parametrize("path", _files(PUBLISHED), ids=lambda p: p.stem if p else "MISSING")
def test_published_capture(path):
    case = _load(path)
    result = count_tools(case["capture"]).to_json()
    expected = case["expected"]
    assert result["totalTokens"] == expected["totalTokens"]
    assert result["canonicalSha256"] == expected["canonicalSha256"]
    assert result["canonicalLength"] == expected["canonicalLength"]
    assert result["toolCount"] == expected["toolCount"] == len(case["capture"])
    _assert_tools(result["tools"], expected["tools"])
    assert all("divergence" not in t for t in result["tools"])
    assert _strip(result["tools"]) == [_reference_tool(t) for t in case["capture"]]


@pytest.mark.parametrize("path", _files(ADVERSARIAL), ids=lambda p: p.stem if p else "MISSING")
def test_adversarial_case(path):
    case = _load(path)
    tools = parse(case["wire"])
    result = count_tools(tools).to_json()
    assert result["totalTokens"] == case["tokens"]
    assert result["canonicalSha256"] == case["canonicalSha256"]
    assert result["canonicalLength"] == case["canonicalLength"]
    assert result["toolCount"] == len(tools)
    if "tools" in case:
        _assert_tools(result["tools"], case["tools"])
        assert all("divergence" not in t for t in result["tools"])
    else:
        # The JS reference throws (toolsError): our documented rule applies and is marked.
        assert case["toolsError"]
        marked = [t for t in result["tools"] if "divergence" in t]
        assert marked, "a case the JS reference cannot count must carry a divergence note"
    assert _strip(result["tools"]) == [_reference_tool(t) for t in tools]
    if case["jsTiktokenTokens"] != case["tokens"]:
        # Known divergence (js-tiktoken's regex engine): we count as python tiktoken does.
        assert result["totalTokens"] == case["tokens"] != case["jsTiktokenTokens"]
        if "jsTiktokenTools" in case:
            assert _strip(result["tools"]) == case["tools"] != case["jsTiktokenTools"]


def test_non_string_description_rule():
    (tool,) = count_tools(parse('[{"name":"n","description":7}]')).tools
    assert tool.descriptionTokens == count("7") == 1
    assert "not a string" in tool.divergence
    assert tool.to_json()["divergence"] == tool.divergence


def test_null_element_rule():
    first, second = count_tools(parse('[null,{"name":"ok"}]')).tools
    assert (first.name, first.tokens, first.descriptionTokens, first.inputSchemaTokens) == (
        UNNAMED, count("null"), 0, 0)
    assert "null" in first.divergence and second.divergence is None


@pytest.mark.parametrize("falsy", ["0", "-0", "0.0", "false", "null", '""'])
def test_falsy_description_and_schema_count_zero(falsy):
    (tool,) = count_tools(parse(f'[{{"name":"t","description":{falsy},"inputSchema":{falsy}}}]')).tools
    assert (tool.descriptionTokens, tool.inputSchemaTokens) == (0, 0)


def test_nan_is_falsy():
    assert not js_truthy(math.nan) and not js_truthy(-0.0) and js_truthy({}) and js_truthy([])


def test_to_json_field_names():
    out = count_tools(parse('[{"name":"a","description":"d","inputSchema":{}}]')).to_json()
    assert list(out) == ["totalTokens", "canonicalSha256", "canonicalLength", "toolCount", "tools"]
    assert list(out["tools"][0]) == ["name", "tokens", "descriptionTokens", "inputSchemaTokens"]


def test_rejects_non_list():
    with pytest.raises(TypeError):
        count_tools({"name": "x"})


# Session-start load (deferred-load/v1).

def test_session_start_load_sums_both_halves():
    tools = parse('[{"name":"a"},{"description":"no name"},{"name":"b"}]')
    load = session_start_load(tools, "Use a then b.")
    assert load.namesTokens == count('["a",null,"b"]')
    assert load.instructionsTokens == count("Use a then b.")
    assert load.totalTokens == load.namesTokens + load.instructionsTokens


def test_session_start_load_without_instructions_is_a_floor():
    load = session_start_load(parse('[{"name":"a"}]'), None)
    assert load.instructionsTokens is None and load.totalTokens is None
    assert load.to_json() == {"namesTokens": count('["a"]'), "instructionsTokens": None,
                              "totalTokens": None}
    empty = session_start_load([], "")
    assert (empty.namesTokens, empty.instructionsTokens, empty.totalTokens) == (1, 0, 1)


def test_session_start_load_rejects_non_string_instructions():
    with pytest.raises(TypeError):
        session_start_load([], 5)


# count_tools' shared tokenization must equal counting every string on its own.

_text = st.text(alphabet=st.sampled_from(list('ab Z9"\',:}]{\\/\n.') + ["é", "日", "🙂", "\ud800"]),
                max_size=40)
_json = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12)
_tool = st.fixed_dictionaries({}, optional={"name": _json, "description": _json,
                                            "inputSchema": _json, "1": _json, "title": _text})


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(_tool | _json, max_size=5))
def test_count_tools_equals_direct_reference(tools):
    result = count_tools(tools)
    canonical = stringify(tools)
    assert result.totalTokens == count(canonical)
    assert result.canonicalLength == len(canonical.encode("utf-8"))
    assert _strip([t.to_json() for t in result.tools]) == [_reference_tool(t) for t in tools]


def test_threads_do_not_change_counts(monkeypatch):
    if not PUBLISHED:
        pytest.fail(f"conformance cases not found under {CONFORMANCE}")
    capture = _load(max(PUBLISHED, key=lambda p: p.stat().st_size))["capture"]
    single = count_tools(capture)
    monkeypatch.setenv("MCP_CONTEXT_COST_THREADS", "3")
    assert count_tools(capture) == single
