"""Hostile or concurrent writers against the kept compatibility passes: a pass is only ever taken for the
same bytes of the same method, and measures writing the same folder at once never leave a pass half written."""

from __future__ import annotations

import multiprocessing
import os

import pytest

from harness.probe import compatibility

GOOD = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / compatibility.VERDICTS_DIR


def _findings(method: str, value: dict) -> list:
    found = compatibility._Found()
    compatibility.check_result(found, method, value)
    return found.compatibility


def test_a_pass_kept_for_one_method_is_not_taken_for_another(kept):
    """The same bytes are a valid initialize result and an invalid tools/list result: each method judges."""
    assert _findings("initialize", GOOD) == []
    assert any(kept.iterdir())
    assert _findings("tools/list", GOOD)  # no tools: refused, though the same JSON passed as initialize


def _write_many(cache: str, key: str, rounds: int) -> None:
    os.environ["MCP_CONTEXT_COST_CACHE"] = cache
    for _ in range(rounds):
        compatibility._remember(key)


def test_measures_writing_the_same_pass_at_once_never_leave_a_torn_one(kept, tmp_path):
    key = compatibility._verdict_key("initialize", GOOD)
    assert key is not None
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_write_many, args=(str(tmp_path / "cache"), key, 300)) for _ in range(3)]
    for writer in writers:
        writer.start()
    seen = 0
    while any(writer.is_alive() for writer in writers):
        path = kept / key
        if path.exists():
            assert compatibility._passed(key), "a pass half written was read"
            seen += 1
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert compatibility._passed(key) and seen
    assert [name for name in os.listdir(kept) if name != key] == []  # no temporary left behind
