"""The Action's job summary: where the tokens go per tool and per field, summing exactly to the
total, and for a tool that grew against the baseline, which of its fields grew. Real records:
this repository's published filesystem capture, and the same capture with one tool's description
or input schema grown (counted again with the harness's own counting)."""

from __future__ import annotations

import copy
import json

from harness.action.comparison import compare
from harness.action.summary import render
from harness.core.counting import count_tools
from tests.conftest import REPO
from tests.pages import builders as b


def _published(name: str = "filesystem") -> dict:
    return json.loads((REPO / "results" / name / "measurement.json").read_text(encoding="utf-8"))


def _with(record: dict, change) -> dict:
    """``record`` with its capture changed by ``change(tools)`` and every number counted again."""
    out = copy.deepcopy(record)
    change(out["rawToolsCapture"])
    counted = count_tools(out["rawToolsCapture"]).to_json()
    out.update({k: counted[k] for k in ("totalTokens", "canonicalSha256", "canonicalLength", "toolCount", "tools")})
    return out


def _table(markdown: str, heading: str) -> list[list[str]]:
    return b.md_tables(markdown.split(heading, 1)[1])[0]


def _int(cell: str) -> int:
    return int(cell.strip("*").replace(",", "") or 0)


def test_the_breakdown_sums_exactly_to_the_total():
    for name in ("filesystem", "memory", "everything"):
        record = _published(name)
        table = _table(render(record), "### Where the tokens go")
        head, body, total = table[0], table[1:-1], table[-1]
        assert head[:2] == ["tool", "tokens"] and total[0] == "**total**"
        assert _int(total[1]) == record["totalTokens"]
        assert sum(_int(r[1]) for r in body) == record["totalTokens"]  # tools + punctuation
        for column in range(2, len(head)):
            assert sum(_int(r[column]) for r in body) == _int(total[column]), (name, head[column])
        for row in body[:-1]:
            assert sum(_int(c) for c in row[2:]) == _int(row[1]), row


def test_a_grown_tool_says_which_field_grew():
    before = _published()
    grown_name = before["rawToolsCapture"][0]["name"]

    def longer_description(tools):
        tools[0]["description"] += " It also reads files of any size, in any encoding, one chunk at a time." * 3

    def wider_schema(tools):
        tools[1]["inputSchema"]["properties"]["encoding"] = {"type": "string", "description": "The file's encoding."}

    after = _with(before, lambda tools: (longer_description(tools), wider_schema(tools)))
    md = render(after, comparison=compare(before, after), baseline_record=before)
    grown = _table(md, "**Grown tools**")
    assert grown[0] == ["tool", "baseline", "now", "delta", "what changed"]
    rows = {r[0].replace("\\", ""): [c.replace("\\", "") for c in r] for r in grown[1:]}
    assert rows[grown_name][4].startswith("description +") and "input schema" not in rows[grown_name][4]
    second = before["rawToolsCapture"][1]["name"]
    assert rows[second][4].startswith("input schema +")


def test_without_a_capture_that_re_derives_the_standalone_counts_are_shown():
    record = _published()
    record["totalTokens"] += 1  # the capture no longer re-derives the number: no breakdown claimed
    md = render(record)
    assert "### Where the tokens go" not in md and "### Per-tool breakdown" in md
