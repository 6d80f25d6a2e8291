"""Records re-derived once per content (harness/pages/regen_cache.py): a warm regen does not count an
unchanged record again, a changed record is re-derived (a forged one still refused), and an entry that is
not exactly what the run would write — damaged, foreign, oversized, a FIFO, a link — is a miss."""

from __future__ import annotations

import os

import pytest

from harness.pages import published_records, regen_cache
from harness.pages.published_records import RecordError
from harness.pages.regen import regen
from tests.pages import builders as b
from tests.pages import packs

A = [b.tool("alpha")]
B = [b.tool("beta", "Finds another thing."), b.tool("gamma")]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [b.entry("srv"), b.entry("ok")])
    b.write_record(root, b.measured("srv", A))
    b.write_record(root, b.measured("ok", B))
    return root


@pytest.fixture
def rederived(monkeypatch):
    """The servers whose record ``refusal`` re-derived, in order."""
    seen: list[str] = []
    real = published_records.refusal

    def spy(record, where):
        seen.append(record["server"])
        return real(record, where)

    monkeypatch.setattr(published_records, "refusal", spy)
    return seen


def published(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _forge(root) -> bytes:
    """srv's record with one token more than its capture gives (refused by re-derivation)."""
    record = b.measured("srv", A)
    record["totalTokens"] += 1
    return b.write_record(root, record).read_bytes()


def test_a_warm_regen_rederives_nothing_and_gives_the_same_bytes(repo, rederived):
    regen(repo)
    cold = published(repo)
    assert sorted(rederived) == ["ok", "srv"]
    regen(repo)
    assert sorted(rederived) == ["ok", "srv"] and published(repo) == cold


def test_a_changed_record_is_rederived_and_its_pages_change(repo, rederived, tmp_path, monkeypatch):
    regen(repo)
    before = published(repo)
    b.write_record(repo, b.measured("srv", B))
    regen(repo)
    assert sorted(rederived) == ["ok", "srv", "srv"]
    after = published(repo)
    assert after["docs/servers/srv.md"] != before["docs/servers/srv.md"]
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "empty-cache"))
    regen(repo)
    assert published(repo) == after  # what a run with no cache writes


def test_a_forged_record_is_refused_after_its_honest_bytes_passed(repo):
    regen(repo)
    board = (repo / "results/leaderboard.md").read_bytes()
    _forge(repo)
    with pytest.raises(RecordError, match="refused: totalTokens"):
        regen(repo)
    assert (repo / "results/leaderboard.md").read_bytes() == board


def test_other_code_rederives_again(repo, rederived, monkeypatch):
    regen(repo)
    monkeypatch.setattr(regen_cache, "code_key", lambda: "other code")
    regen(repo)
    assert sorted(rederived) == ["ok", "ok", "srv", "srv"]


def test_the_entry_a_pass_leaves_is_what_lets_a_record_through(repo):
    regen(repo)
    key = regen_cache.Verdicts.key(_forge(repo))
    packs.plant(regen_cache.folder(repo, "records"), key, f"passed {key}\n".encode())
    with pytest.raises(RecordError) as caught:  # (its tool vectors still disagree with it)
        regen(repo)
    assert "refused" not in str(caught.value)  # taken as passed: the plants below reach what regen reads


@pytest.mark.parametrize("plant", ["another key", "garbage", "oversized", "fifo", "link"])
def test_a_damaged_or_foreign_entry_is_never_taken_for_a_pass(repo, tmp_path, plant):
    regen(repo)
    plant_verdict(regen_cache.folder(repo, "records"), regen_cache.Verdicts.key(_forge(repo)), plant, tmp_path)
    with pytest.raises(RecordError, match="refused: totalTokens"):
        regen(repo)


def plant_verdict(where, key: str, plant: str, tmp_path) -> None:
    """Put in ``where``'s shard of ``key`` an entry that is not its pass (``plant``: another key, garbage,
    oversized, fifo, link: the shard itself) or, for ``right``, its pass."""
    right = f"passed {key}\n".encode()
    shard = packs.shard_file(where, key)
    if plant == "another key":
        packs.plant(where, key, f"passed {'0' * 64}\n".encode())
    elif plant == "garbage":
        packs.plant(where, key, b"\xff\x00 not an entry")
    elif plant == "oversized":
        packs.plant(where, key, right + b" " * 4096)
    elif plant == "fifo":
        packs.plant(where, key, right)
        shard.unlink()
        os.mkfifo(shard)
    elif plant == "link":
        packs.plant(where, key, right)
        whole = shard.read_bytes()
        shard.unlink()
        (tmp_path / "elsewhere").write_bytes(whole)
        shard.symlink_to(tmp_path / "elsewhere")
    else:
        packs.plant(where, key, right)


def test_records_rederived_in_workers_give_what_one_process_gives(repo, monkeypatch):
    b.write_catalog(repo, [b.entry("srv"), b.entry("ok"), b.entry("gone")])
    results = repo / "results"
    names = ["srv", "ok", "gone"]
    serial = published_records.load_records(results, names)
    monkeypatch.setattr(published_records, "REDERIVE_PARALLEL_FROM", 1)
    assert published_records.load_records(results, names) == serial
    _forge(repo)
    with pytest.raises(RecordError, match="refused: totalTokens") as refused:
        published_records.load_records(results, names)
    monkeypatch.setattr(published_records, "REDERIVE_PARALLEL_FROM", 64)
    with pytest.raises(RecordError) as alone:
        published_records.load_records(results, names)
    assert refused.value.errors == alone.value.errors
