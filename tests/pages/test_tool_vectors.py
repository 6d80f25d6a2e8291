"""results/<server>/tool-vectors.json (harness/pages/tool_vectors.py): what is appended
and when, the bound, re-derivation from the capture, and the reader agreeing with the schema."""

from __future__ import annotations

import copy
import json

import pytest

from harness.core.counting import count_tools
from harness.pages import tool_vectors as tv
from harness.pages.published_records import RecordError
from harness.pages.regen import regen
from harness.util import schemas
from tests.pages import builders as b

A = [b.tool("alpha", "Search."), b.tool("beta", "Fetch one.")]
B = [*A, b.tool("gamma", "Create a thing.")]


def rec(tools, day="2026-11-30", mode="host", status="measured"):
    return b.measured("srv", tools, status=status, measuredAt=f"{day}T12:00:00.000Z",
                      isolation={**b.HOST, "mode": mode})


def fold(*records) -> tv.VectorHistory:
    history = tv.VectorHistory("srv")
    for record in records:
        history = tv.advance(history, record, "results/srv/measurement.json")
    return history


def test_appends_on_a_new_capture_or_isolation_and_never_on_failure_or_repeat():
    failed = b.failed("srv", "timeout", ["no answer"])
    history = fold(rec(A, "2026-11-02"), rec(A, "2026-11-09"), failed, rec(B, "2026-11-16"),
                   rec(A, "2026-11-23"), rec(A, "2026-11-30", mode="sandbox"), rec(A, "2026-12-07", mode="sandbox", status="dynamic"))
    got = [(v["date"], v["toolCount"], v["isolation"]) for v in history.vectors]
    # A→B→A keeps three (the newest is always the current capture); same bytes under sandbox: a fourth
    assert got == [("2026-11-02", 2, "host"), ("2026-11-16", 3, "host"), ("2026-11-23", 2, "host"),
                   ("2026-11-30", 2, "sandbox")]
    counts = count_tools(B)
    assert history.vectors[1]["tools"] == [{"name": t.name, "tokens": t.tokens, "descriptionTokens": t.descriptionTokens,
                                           "inputSchemaTokens": t.inputSchemaTokens} for t in counts.tools]
    assert history.vectors[1]["canonicalSha256"] == counts.canonicalSha256
    assert history.vectors[1]["totalTokens"] == counts.totalTokens


def test_bound_keeps_the_newest(tmp_path):
    records = [rec([b.tool(f"t{i}", "x" * (i % 7))] * (1 + i % 3), f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}")
               for i in range(tv.MAX_VECTORS + 5)]
    history = fold(*records)
    assert len(history.vectors) == tv.MAX_VECTORS
    assert history.vectors[0]["date"] == records[5]["measuredAt"][:10]
    assert history.vectors[-1]["date"] == records[-1]["measuredAt"][:10]
    text = history.text()
    (tmp_path / "tool-vectors.json").write_text(text, encoding="utf-8")
    assert tv.read(tmp_path / "tool-vectors.json", "srv") == history
    doc = json.loads(text)
    schemas.check("tool-vectors", doc)
    assert doc["bound"] == tv.MAX_VECTORS == len(doc["vectors"])


def test_a_capture_that_does_not_rederive_is_refused():
    bad = rec(A)
    bad["totalTokens"] += 1
    with pytest.raises(tv.CaptureMismatch, match="does not|re-derives"):
        fold(bad)
    other = rec(A)
    other["canonicalSha256"] = "0" * 64
    with pytest.raises(tv.CaptureMismatch):
        fold(other)
    undated = rec(A)
    undated["measuredAt"] = "yesterday"
    with pytest.raises(RecordError, match="measuredAt"):
        fold(undated)


def test_a_rederived_record_gives_the_same_vector_from_its_own_rows_without_counting(monkeypatch):
    records = [rec(A, "2026-11-02"), rec(B, "2026-11-09"), rec(A, "2026-11-16", mode="sandbox")]
    counted = [tv.advance(tv.VectorHistory("srv"), r, "results/srv/measurement.json") for r in records]
    monkeypatch.setattr(tv, "count_tools", lambda tools: pytest.fail("counted again"))
    reused = [tv.advance(tv.VectorHistory("srv"), r, "results/srv/measurement.json", rederived=True) for r in records]
    assert [h.text() for h in reused] == [h.text() for h in counted]
    rowless = rec(B)
    del rowless["tools"]  # no rows of its own to stand for the capture: counted
    with pytest.raises(pytest.fail.Exception, match="counted again"):
        tv.advance(tv.VectorHistory("srv"), rowless, "results/srv/measurement.json", rederived=True)


def test_hostile_names_round_trip(tmp_path):
    names = ["lone \ud800 surrogate", "line\nbreak", "ünï", 0, False, {"k": 1}]
    record = rec([b.tool(n, "d") for n in names])
    history = fold(record)
    path = tmp_path / "tool-vectors.json"
    path.write_text(history.text(), encoding="utf-8")
    again = tv.read(path, "srv")
    assert again.vectors == history.vectors
    assert [t["name"] for t in again.vectors[0]["tools"]] == ["lone \ud800 surrogate", "line\nbreak", "ünï", "0",
                                                              "false", '{"k":1}']


def _good_text() -> str:
    return fold(rec(A), rec(B, "2026-12-07")).text()


@pytest.mark.parametrize("mutate, where", [
    (lambda v: v.pop("isolation"), "exactly"),
    (lambda v: v.update(extra=1), "exactly"),
    (lambda v: v.update(date="2026-13-01"), "date"),
    (lambda v: v.update(date=20261130), "date"),
    (lambda v: v.update(canonicalSha256="ABC"), "canonicalSha256"),
    (lambda v: v.update(isolation="vm"), "isolation"),
    (lambda v: v.update(status="timeout"), "status"),
    (lambda v: v.update(totalTokens=-1), "whole"),
    (lambda v: v.update(totalTokens=1.5), "whole"),
    (lambda v: v.update(toolCount=True), "whole"),
    (lambda v: v.update(tools={}), "tools"),
    (lambda v: v["tools"][0].__setitem__(0, 7), "per-tool"),
    (lambda v: v["tools"][0].pop(2), "per-tool"),
    (lambda v: v["tools"][0].append(5), "per-tool"),
    (lambda v: v["tools"][0].__setitem__(1, -3), "per-tool"),
    (lambda v: v["tools"][0].__setitem__(3, 2.5), "per-tool"),
    (lambda v: v["tools"].append("x"), "per-tool"),
    (lambda v: v["tools"].__setitem__(0, dict(zip(tv.TOOL_FIELDS, v["tools"][0]))), "per-tool"),
])
def test_reader_refuses_what_the_schema_refuses(tmp_path, mutate, where):
    text = _good_text()
    doc = json.loads(text)
    schemas.check("tool-vectors", doc)
    vector = copy.deepcopy(doc["vectors"][1])
    mutate(vector)
    doc["vectors"][1] = vector
    with pytest.raises(schemas.SchemaViolation):
        schemas.check("tool-vectors", doc)
    lines = text.split("\n")
    lines[2] = json.dumps(vector)
    path = tmp_path / "tool-vectors.json"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(RecordError, match=rf"tool-vectors.json:3: .*{where}"):
        for vector in tv.read(path, "srv").vectors:  # a per-tool list is checked when first used
            vector["tools"]


@pytest.mark.parametrize("field, value, says", [
    ("date", "2026-12-07\n", "date"),  # (a pattern's "$" also matches before a final line break)
    ("canonicalSha256", "ab" * 32 + "\n", "canonicalSha256"),
    ("date", "\u0662\u0660\u0662\u0666-12-07", "date"),  # digits of another script
    ("date", "2026-12-1\u0667", "date"),
])
@pytest.mark.parametrize("plain", [True, False])
def test_reader_refuses_a_final_line_break_or_another_scripts_digits_in_a_value(tmp_path, field, value, says, plain):
    """Values the schema's ECMA patterns refuse, by hand or in the line form this module writes: a date or hash
    with a line break after it would reach the capture index's JSON text as a raw newline."""
    text = _good_text()
    doc = json.loads(text)
    vector = {**doc["vectors"][1], field: value}
    lines = text.split("\n")
    lines[2] = json.dumps(vector, separators=(",", ":"), ensure_ascii=False) if plain else json.dumps(vector)
    path = tmp_path / "tool-vectors.json"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(RecordError, match=rf"tool-vectors.json:3: .*{says}"):
        tv.read(path, "srv")


@pytest.mark.parametrize("text", [
    "", "{}", "[]\n", "not json at all\n",
    '{"method":"cost-regression/v1","server":"other","bound":104,"vectors":[\n{}\n]}\n',
])
def test_reader_refuses_other_shapes_and_names_the_file(tmp_path, text):
    path = tmp_path / "tool-vectors.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordError, match="tool-vectors.json: not a tool-vectors file of 'srv'"):
        tv.read(path, "srv")


def test_reader_refuses_a_missing_comma_and_an_overlong_file(tmp_path):
    lines = _good_text().split("\n")
    path = tmp_path / "tool-vectors.json"
    path.write_text("\n".join([lines[0], lines[1][:-1], *lines[2:]]), encoding="utf-8")
    with pytest.raises(RecordError, match="must end with ','"):
        tv.read(path, "srv")
    body = [lines[1]] * (tv.MAX_VECTORS + 1)
    path.write_text("\n".join([lines[0], *body[:-1], body[-1][:-1], "]}", ""]), encoding="utf-8")
    with pytest.raises(RecordError, match="more than the bound"):
        tv.read(path, "srv")


def test_regen_refuses_a_bad_vectors_file_and_writes_nothing(tmp_path):
    b.write_catalog(tmp_path, [b.entry("srv"), b.entry("ok")])
    b.write_record(tmp_path, rec(A))
    b.write_record(tmp_path, b.measured("ok", B))
    regen(tmp_path)
    board = (tmp_path / "results/leaderboard.md").read_bytes()
    (tmp_path / "results/srv/tool-vectors.json").write_text("{broken", encoding="utf-8")
    b.write_record(tmp_path, b.measured("ok", A))
    with pytest.raises(RecordError, match="srv/tool-vectors.json"):
        regen(tmp_path)
    assert (tmp_path / "results/leaderboard.md").read_bytes() == board
    assert (tmp_path / "results/ok/tool-vectors.json").read_text().count("\n") == 3  # not appended


def test_vector_in_force_on_a_date_must_carry_that_measurement(tmp_path):
    history = fold(rec(A, "2026-11-02"), rec(B, "2026-11-16", mode="docker"))
    a, bb = count_tools(A), count_tools(B)
    assert tv.at(history, "2026-11-09", a.totalTokens, 2, "host") is history.vectors[0]
    assert tv.at(history, "2026-11-09", a.totalTokens, 2, None) is history.vectors[0]  # not on record: no test
    assert tv.at(history, "2026-11-16", bb.totalTokens, 3, "docker") is history.vectors[1]
    assert tv.at(history, "2026-11-16", a.totalTokens, 2, "host") is None  # the vector then is B's
    assert tv.at(history, "2026-11-01", a.totalTokens, 2, "host") is None  # before the vectors begin
    assert tv.at(history, "2026-11-09", a.totalTokens, 2, "docker") is None
