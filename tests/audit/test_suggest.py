"""``--suggest`` (harness/audit/suggest.py; methodology "Tool shape", tool-shape/v1) and the Action's
job summary placing each tool in the distribution: the p90 rule fires at and not below p90, names
the exact percentile and an approximate recovery, schemas never draw advice, "nothing unusual" in
those words, and a baseline that cannot be read is a named problem."""

from __future__ import annotations

import json

import pytest

from harness.action.summary import render
from harness.audit import published_reader, suggest
from harness.pages import tool_shape
from harness.util.published import TOOL_SHAPE
from tests.audit.served import serving


def shape_of(descriptions: list[int], tokens=None, schemas=None) -> dict:
    n = len(descriptions)
    doc = {"method": "tool-shape/v1", "quantile": "nearest-rank", "servers": 1, "tools": n,
           "metrics": {"tokens": tool_shape.table(tokens or [d + 20 for d in descriptions]),
                       "descriptionTokens": tool_shape.table(descriptions),
                       "inputSchemaTokens": tool_shape.table(schemas or [10] * n)}}
    return doc


HUNDRED = shape_of(list(range(1, 101)))  # nearest rank over 1..100: the p-th point is p (p0 = 1)


def tool(name, description, schema=10, tokens=None):
    return {"name": name, "tokens": tokens if tokens is not None else description + schema + 8,
            "descriptionTokens": description, "inputSchemaTokens": schema}


def test_p90_rule_fires_at_p90_and_not_below():
    assert HUNDRED["metrics"]["descriptionTokens"][90] == 90 and HUNDRED["metrics"]["descriptionTokens"][50] == 50
    assert suggest.suggest(HUNDRED, [tool("below", 89)]) == []
    at = suggest.suggest(HUNDRED, [tool("at", 90)])
    assert [(s.name, s.percentile, s.median, s.recovery) for s in at] == [("at", 90, 50, 40)]
    above = suggest.suggest(HUNDRED, [tool("far", 1000), tool("mid", 95), tool("low", 3)])
    assert [(s.name, s.percentile, s.recovery) for s in above] == [("far", 100, 950), ("mid", 95, 45)]
    line = suggest.sentence(above[1])
    assert line == ("mid: description 95 tokens, at p95 of measured descriptions; trimming it to the median (50) "
                    "would recover ≈45 tokens (approximate: component counts sum only approximately across token "
                    "boundaries, and a rewritten description tokenizes as itself)")


@pytest.mark.parametrize("population, value, fires", [
    ([10] * 95 + [40] * 5, 10, False),        # p90 = median = 10: at p90, but nothing to recover
    ([10] * 95 + [40] * 5, 40, True),
    ([0] * 100, 0, False),
    (list(range(0, 1000, 10)), 880, False),    # 0, 10, …, 990: p90 is the 90th value, 890
    (list(range(0, 1000, 10)), 889, False),
    (list(range(0, 1000, 10)), 890, True),
    ([5, 7], 7, True), ([5, 7], 6, False),
])
def test_fires_is_at_or_above_p90_and_above_the_median(population, value, fires):
    shape = shape_of(population)
    points = shape["metrics"]["descriptionTokens"]
    assert suggest.fires(points, value) is fires
    assert bool(suggest.suggest(shape, [tool("t", value)])) is fires
    if fires:
        assert suggest.suggest(shape, [tool("t", value)])[0].percentile == tool_shape.percentile_of(points, value) >= 90


def test_schemas_never_draw_advice_and_nothing_unusual_is_said_in_those_words():
    shape = shape_of(list(range(1, 101)), schemas=list(range(1, 101)))
    tools = [tool("huge_schema", 5, schema=10**6, tokens=10**6 + 20), tool("small", 40)]
    assert suggest.suggest(shape, tools) == []
    assert suggest.report(shape, tools) == [suggest.NOTHING_UNUSUAL]
    assert suggest.NOTHING_UNUSUAL.startswith("Nothing unusual")
    placed = suggest.place(shape, tools)
    assert placed[0].percentiles == (100, 5, 100) and placed[1].percentiles[1] == 40
    assert suggest.place(shape, [tool("tiny", 0)])[0].percentiles[1] is None  # below p0
    with pytest.raises(suggest.NoBaseline):
        suggest.place(tool_shape.build({}), tools)


def _record(tools):
    return {"server": "mine", "status": "measured", "totalTokens": 999, "toolCount": len(tools),
            "canonicalSha256": "a" * 64, "tools": tools, "notes": []}


def test_job_summary_places_each_tool_and_names_the_suggestion(tmp_path):
    path = tmp_path / "tool-shape.json"
    path.write_text(tool_shape.render(HUNDRED), encoding="utf-8")
    md = render(_record([tool("fat|desc", 95), tool("ok", 20)]), tool_shape=str(path))
    section = md.split("### Tool shape", 1)[1]
    # tokens are 21…120 (p93 = 113), descriptions 1…100, every schema 10 (so 10 is at p100)
    assert "| fat\\|desc | 113 at p93 | 95 at p95 | 10 at p100 |" in section
    assert "| ok | 38 at p18 | 20 at p20 | 10 at p100 |" in section
    assert "- fat\\|desc: description 95 tokens, at p95 of measured descriptions" in section
    calm = render(_record([tool("ok", 20)]), tool_shape=str(path))
    assert suggest.NOTHING_UNUSUAL in calm
    assert "### Tool shape" not in render(_record([]) | {"totalTokens": None}, tool_shape=str(path))


def test_job_summary_names_a_baseline_it_cannot_read(tmp_path):
    missing = render(_record([tool("ok", 20)]), tool_shape=str(tmp_path / "none.json"))
    assert "The tool-shape baseline could not be used: tool\\-shape baseline could not be read from" in missing
    with serving(tmp_path) as base:
        fetched = render(_record([tool("ok", 20)]), tool_shape=base + "none.json")
    assert "HTTP 404" in fetched
    (tmp_path / "empty.json").write_text(json.dumps(tool_shape.build({})), encoding="utf-8")
    empty = render(_record([tool("ok", 20)]), tool_shape=str(tmp_path / "empty.json"))
    assert "holds no measured tools" in empty


def test_the_checkouts_own_baseline_is_the_default():
    # regen publishes results/tool-shape.json in this repository; the Action (run from a checkout of
    # it) reads that file, and only a copy without it (the container image) fetches the raw URL.
    assert published_reader.default_source(TOOL_SHAPE) == str(published_reader.CHECKOUT / "results/tool-shape.json")
    shape = suggest.load_shape()
    assert shape["tools"] > 0 and len(shape["metrics"]["descriptionTokens"]) == 101
    assert published_reader.default_source(TOOL_SHAPE, published_reader.CHECKOUT / "nowhere") == \
        published_reader.PUBLISHED_RAW + "results/tool-shape.json"
