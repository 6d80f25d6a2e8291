"""What regen reads beside the records' re-derivation (harness/pages/published_records.py, regen.Loaded):
the caller's work runs once, in this process, while workers re-derive; the workers inherit the tokenizer
and the records; the records' errors come first and unchanged, and an error reading history.csv is raised
where the history is used, as a read there would raise it."""

from __future__ import annotations

import os

import pytest

from harness.core import tokenizer
from harness.db.history import HistoryError, read_history
from harness.pages import published_records
from harness.pages.published_records import RecordError
from harness.pages.regen import Loaded, regen, render_all
from tests.pages import builders as b

A = [b.tool("alpha")]
B = [b.tool("beta", "Finds another thing."), b.tool("gamma")]
NAMES = ["srv", "ok", "gone"]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [b.entry(name) for name in NAMES])
    b.write_record(root, b.measured("srv", A))
    b.write_record(root, b.measured("ok", B))
    b.write_history(root, ["2026-06-01,ok,40,2,measured,host"])
    return root


@pytest.fixture(params=[1, 64], ids=["workers", "in-process"])
def parallel_from(request, monkeypatch):
    monkeypatch.setattr(published_records, "REDERIVE_PARALLEL_FROM", request.param)
    return request.param


def _forge(root) -> None:
    record = b.measured("srv", A)
    record["totalTokens"] += 1
    b.write_record(root, record)


def test_the_callers_work_runs_once_here_and_the_records_are_what_they_were(repo, parallel_from):
    alone = published_records.load_records(repo / "results", NAMES)
    pids: list[int] = []
    assert published_records.load_records(repo / "results", NAMES, meanwhile=lambda: pids.append(os.getpid())) == alone
    assert pids == [os.getpid()]
    _forge(repo)
    with pytest.raises(RecordError) as before:
        published_records.load_records(repo / "results", NAMES)
    with pytest.raises(RecordError) as beside:
        published_records.load_records(repo / "results", NAMES, meanwhile=lambda: pids.append(os.getpid()))
    assert beside.value.errors == before.value.errors and pids == [os.getpid()] * 2


def test_workers_inherit_the_tokenizer_this_process_loaded(repo, tmp_path, monkeypatch):
    monkeypatch.setattr(published_records, "REDERIVE_PARALLEL_FROM", 1)
    with monkeypatch.context() as suite:  # the suite's cache, which holds the user's rank file
        suite.setenv("MCP_CONTEXT_COST_CACHE", os.environ.get("MCP_CONTEXT_COST_SUITE_CACHE", ""))
        ranks = tokenizer.cache_path()
    if not ranks.is_file():
        pytest.skip("no cached rank file to load")
    monkeypatch.setattr(tokenizer, "cache_path", lambda: ranks)
    monkeypatch.setattr(tokenizer, "_encoding", None)
    loaded = tmp_path / "loaded-by"
    real = tokenizer._provision_uncached

    def spy():
        with open(loaded, "a") as out:
            out.write(f"{os.getpid()}\n")
        return real()

    monkeypatch.setattr(tokenizer, "_provision_uncached", spy)
    published_records.load_records(repo / "results", NAMES)
    assert loaded.read_text().split() == [str(os.getpid())]


def test_a_tokenizer_that_cannot_load_here_is_left_to_the_workers(repo, monkeypatch):
    monkeypatch.setattr(published_records, "REDERIVE_PARALLEL_FROM", 1)

    def broken() -> bool:
        raise tokenizer.TokenizerUnavailable("no ranks here")

    monkeypatch.setattr(tokenizer, "load_cached", broken)
    assert set(published_records.load_records(repo / "results", NAMES)) == {"srv", "ok"}


def test_the_records_errors_come_before_a_bad_history(repo, parallel_from):
    b.write_history(repo, ["2026-06-01,ok,forty,2,measured,host"])
    _forge(repo)
    with pytest.raises(RecordError) as alone:
        published_records.load_records(repo / "results", NAMES)
    with pytest.raises(RecordError) as read:
        Loaded.read(repo)
    with pytest.raises(RecordError) as regenerated:
        regen(repo)
    assert read.value.errors == regenerated.value.errors == alone.value.errors


def test_a_bad_history_is_raised_where_it_is_used(repo, parallel_from):
    path = b.write_history(repo, ["2026-06-01,ok,forty,2,measured,host"])
    with pytest.raises(HistoryError) as direct:
        read_history(path)
    loaded = Loaded.read(repo)  # read, not raised yet: a caller may do other work before rendering
    with pytest.raises(HistoryError) as rendered:
        render_all(repo, loaded=loaded)
    with pytest.raises(HistoryError) as regenerated:
        regen(repo)
    assert str(rendered.value) == str(regenerated.value) == str(direct.value)
    assert not (repo / "results/leaderboard.md").exists()
