"""Results both strict clients' references accepted are kept by content: the same bytes judged by the same
references are not judged again, and give the same record. Nothing else is ever taken for a pass: another
result, other references, a refusal, or anything planted where a pass would be."""

from __future__ import annotations

import os

import pytest

from harness.probe import build_record, compatibility
from harness.probe.measure import measure_sync
from harness.probe.target import Target

MEMORY = "npx -y @modelcontextprotocol/server-memory@2026.8.31"  # as in tests/probe/test_real_servers.py
GOOD = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
REFUSED = {"tools": [{"name": "echo"}]}  # no inputSchema: both references refuse it


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / compatibility.VERDICTS_DIR


@pytest.fixture
def judged(monkeypatch) -> list[str]:
    """The definitions the references were asked to judge."""
    calls: list[str] = []
    schema, model = compatibility._schema_error, compatibility._model_error
    monkeypatch.setattr(compatibility, "_schema_error", lambda name, value: calls.append(name) or schema(name, value))
    monkeypatch.setattr(compatibility, "_model_error", lambda name, value: calls.append(name) or model(name, value))
    return calls


def _check(value: dict) -> list[compatibility.Finding]:
    found = compatibility._Found()
    compatibility.check_result(found, "tools/list", value)
    return found.compatibility


@pytest.mark.slow
def test_a_real_server_measured_again_is_not_judged_again_and_gives_the_same_record(kept, judged):
    target = Target(name="kept-memory", command=MEMORY, timeout_seconds=120)
    first = build_record.build(measure_sync(target, isolation="host"))
    assert judged and first["status"] == "measured" and any(kept.iterdir())
    judged.clear()
    again = build_record.build(measure_sync(target, isolation="host"))
    assert judged == []
    assert again["compatibility"] == first["compatibility"] and again["canonicalSha256"] == first["canonicalSha256"]


def test_a_refusal_is_never_kept_and_another_result_is_judged(kept, judged):
    assert _check(REFUSED) and _check(REFUSED) and len(judged) == 4
    assert not kept.exists() or not any(kept.iterdir())
    assert _check(GOOD) == [] and len(judged) == 6
    assert _check(GOOD) == [] and len(judged) == 6  # kept
    assert _check({"tools": [{"name": "echo2", "inputSchema": {"type": "object"}}]}) == [] and len(judged) == 8


def test_other_references_judge_again(kept, judged, monkeypatch):
    assert _check(GOOD) == [] and _check(GOOD) == [] and len(judged) == 2
    real = compatibility.importlib.metadata.version
    monkeypatch.setattr(compatibility.importlib.metadata, "version",
                        lambda name: "0.0.1" if name == "pydantic" else real(name))
    compatibility._code_key.cache_clear()
    try:
        assert _check(GOOD) == [] and len(judged) == 4
    finally:
        monkeypatch.undo()
        compatibility._code_key.cache_clear()


@pytest.mark.parametrize("plant", ["garbage", "another key's pass", "a link to a pass", "a fifo", "a longer file"])
def test_nothing_planted_is_taken_for_a_pass(kept, judged, tmp_path, plant):
    key = compatibility._verdict_key("tools/list", REFUSED)
    assert key is not None
    kept.mkdir(parents=True)
    path = kept / key
    if plant == "garbage":
        path.write_bytes(b"\x00garbage")
    elif plant == "another key's pass":
        path.write_bytes(compatibility._entry("0" * 64))
    elif plant == "a link to a pass":
        (tmp_path / "pass").write_bytes(compatibility._entry(key))
        path.symlink_to(tmp_path / "pass")
    elif plant == "a fifo":
        os.mkfifo(path)
    elif plant == "a longer file":
        path.write_bytes(compatibility._entry(key) + b"x")
    assert _check(REFUSED) and len(judged) == 2


def test_the_kept_passes_stay_bounded(kept, monkeypatch):
    monkeypatch.setattr(compatibility, "MAX_VERDICTS", 8)
    for n in range(20):
        assert _check({"tools": [{"name": f"t{n}", "inputSchema": {"type": "object"}}]}) == []
    assert len(list(kept.iterdir())) <= 8
