"""Every number a page publishes from a record re-derives from a capture in it: the per-tool rows
(server pages, the board's largest tool) and the separate ``discover`` figure, not only the
headline. A forged row or figure is refused by name; an honest record passes."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from harness.core.jsparse import parse
from harness.core.rederive import refusal

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _record(status: str, need: str) -> dict:
    for path in sorted(RESULTS.glob("*/measurement.json")):
        record = parse(path.read_text(encoding="utf-8"))
        if record["status"] == status and record.get(need):
            return record
    pytest.skip(f"no committed {status} record with {need}")


@pytest.fixture
def measured() -> dict:
    record = _record("measured", "tools")
    assert len(record["tools"]) >= 2 and refusal(record, "r") is None
    return copy.deepcopy(record)


@pytest.mark.parametrize(("field", "forge"), [
    ("tokens", lambda v: v + 1),
    ("descriptionTokens", lambda v: 0),
    ("inputSchemaTokens", lambda v: 987654),
    ("name", lambda v: "a-name-the-server-never-sent"),
])
def test_a_forged_per_tool_row_is_refused_by_row_and_field(measured, field, forge):
    last = len(measured["tools"]) - 1
    measured["tools"][last][field] = forge(measured["tools"][last][field])
    line = refusal(measured, "rec.json")
    assert line is not None and line.startswith("rec.json: refused: ") and f"tools[{last}].{field} is " in line


def test_added_dropped_or_mangled_rows_are_refused(measured):
    for forged in (measured["tools"] + [dict(measured["tools"][0])], measured["tools"][1:], "rows", [1] * len(measured["tools"])):
        record = measured | {"tools": forged}
        assert refusal(record, "rec.json") is not None, forged


def test_many_forged_rows_give_one_short_line(measured):
    measured["tools"] = [row | {"tokens": 7} for row in measured["tools"]] * 1
    line = refusal(measured, "rec.json")
    assert line is not None and len(line) < 2000


def test_the_discover_figure_is_rederived_on_any_status(measured):
    # A protocol-mismatch record publishes no headline but its discover figure, on the server page.
    record = {"server": measured["server"], "status": "protocol-mismatch",
              "discover": {"protocolVersion": "2025-06-18", "supportedVersions": None,
                           **{f: measured[f] for f in ("totalTokens", "toolCount", "canonicalSha256")},
                           "rawToolsCapture": measured["rawToolsCapture"]}}
    assert refusal(record, "r") is None
    for field, value in (("totalTokens", 987654), ("toolCount", 0), ("canonicalSha256", "ab" * 32)):
        forged = copy.deepcopy(record)
        forged["discover"][field] = value
        line = refusal(forged, "rec.json")
        assert line is not None and f"discover.{field} is " in line, field


def test_a_side_figure_without_its_capture_is_refused():
    record = next((parse(p.read_text(encoding="utf-8")) for p in sorted(RESULTS.glob("*/measurement.json"))
                   if any(isinstance(e, dict) and "rawCapture" in e
                          for e in (parse(p.read_text(encoding="utf-8")).get("sideLists") or {}).values())), None)
    assert record is not None and refusal(record, "r") is None
    key = next(k for k, e in record["sideLists"].items() if isinstance(e, dict) and "rawCapture" in e)
    for forged_fields in ({"totalTokens": 999999}, {}):
        forged = copy.deepcopy(record)
        del forged["sideLists"][key]["rawCapture"]
        forged["sideLists"][key].update(forged_fields)
        line = refusal(forged, "rec.json")
        assert line is not None and f"sideLists.{key}.totalTokens is " in line and "no rawCapture" in line


def test_more_tools_than_a_record_holds_are_refused_before_counting(measured, monkeypatch):
    from harness.core import rederive

    def never(*_):
        raise AssertionError("counted")

    monkeypatch.setattr(rederive, "count_tools", never)
    many = [{"name": f"t{i}"} for i in range(rederive.MAX_RECORD_TOOLS + 1)]
    line = refusal(measured | {"rawToolsCapture": many}, "rec.json")
    assert line is not None and "holds 20,001 tools, more than the 20,000" in line
    discover = {"status": "protocol-mismatch", "discover": {"totalTokens": 1, "toolCount": 1, "canonicalSha256": "ab" * 32,
                                                            "rawToolsCapture": many}}
    line = refusal(discover, "rec.json")
    assert line is not None and "discover.rawToolsCapture holds 20,001 tools" in line
