"""results/tool-shape.json (harness/pages/tool_shape.py; method tool-shape/v1): the quantile
tables equal a straightforward nearest-rank computation, placement is the largest percentile at or
below a value, and the document is built from complete tool measurements only."""

from __future__ import annotations

import json
import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.pages import tool_shape
from harness.pages.regen import regen
from harness.util import schemas
from tests.pages import builders as b


def naive(values: list[int]) -> list[int]:
    """Nearest rank, read straight off the definition with exact fractions."""
    ordered = sorted(values)
    return [ordered[max(1, math.ceil(Fraction(p, 100) * len(ordered))) - 1] for p in range(101)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=5000), min_size=1, max_size=400))
def test_table_is_nearest_rank(values):
    table = tool_shape.table(values)
    assert table == naive(values)
    assert len(table) == 101 and table[0] == min(values) and table[100] == max(values)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=300), min_size=1, max_size=200), st.integers(min_value=-5, max_value=320))
def test_percentile_of_is_the_largest_point_at_or_below(values, x):
    table = tool_shape.table(values)
    expected = max((p for p in range(101) if table[p] <= x), default=None)
    assert tool_shape.percentile_of(table, x) == expected


def test_empty_population_has_no_tables():
    assert tool_shape.table([]) is None
    doc = tool_shape.build({})
    assert doc["metrics"] == {"tokens": None, "descriptionTokens": None, "inputSchemaTokens": None}
    schemas.check("tool-shape", json.loads(tool_shape.render(doc)))


def test_built_from_complete_tool_measurements_of_measured_and_dynamic_records(tmp_path):
    tools_a = [b.tool("a", "Short."), b.tool("b", "A description that is a good deal longer than the others are.")]
    tools_c = [b.tool("c", "Mid length text here.", {})]
    b.write_catalog(tmp_path, [b.entry("one"), b.entry("two"), b.entry("three"), b.entry("four")])
    b.write_record(tmp_path, b.measured("one", tools_a))
    b.write_record(tmp_path, b.measured("two", tools_c, status="dynamic"))
    b.write_record(tmp_path, b.failed("three", "timeout", ["no answer"]))
    regen(tmp_path)
    doc = json.loads((tmp_path / "results/tool-shape.json").read_text(encoding="utf-8"))
    schemas.check("tool-shape", doc)
    records = [b.measured("one", tools_a), b.measured("two", tools_c)]
    every = [t for r in records for t in r["tools"]]
    assert (doc["servers"], doc["tools"]) == (2, 3)
    for metric in tool_shape.METRICS:
        assert doc["metrics"][metric] == naive([t[metric] for t in every])
