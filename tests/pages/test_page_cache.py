"""A server's page, HTML, trend chart and sparkline kept per input, the leaderboard and the dashboard by all
of theirs (harness/pages/regen.py with regen_cache.Outputs): a warm regen draws no page and writes the same bytes, a change redraws only the pages it reaches, other
code redraws all, and an entry that is not whole and its own — another key's, damaged, oversized, a
FIFO, a link — is a miss: the run writes what a run without any cache writes."""

from __future__ import annotations

import json
import os

import pytest

from harness.pages import cache_shards, dashboard, leaderboard, regen_cache, server_html, server_page, svg
from harness.pages.regen import regen
from tests.pages import builders as b
from tests.pages import packs

A = [b.tool("alpha")]
B = [b.tool("beta", "Finds another thing."), b.tool("gamma")]
HISTORY = ["2026-06-01,srv,900,1,measured,host", "2026-06-08,srv,950,1,measured,host",
           "2026-06-01,ok,40,2,measured,host", "2026-06-01,lone,30,1,measured,host"]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [b.entry("srv", category="files"), b.entry("ok", category="files"),
                           b.entry("lone", category="other")])
    b.write_record(root, b.measured("srv", A))
    b.write_record(root, b.measured("ok", B))
    b.write_record(root, b.measured("lone", A))
    b.write_history(root, HISTORY)
    return root


@pytest.fixture
def drawn(monkeypatch):
    """The servers whose page ``server_page.render`` drew, in order."""
    seen: list[str] = []
    real = server_page.render

    def spy(row, *args, **kwargs):
        seen.append(row.name)
        return real(row, *args, **kwargs)

    monkeypatch.setattr(server_page, "render", spy)
    return seen


def published(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def without_cache(root, tmp_path, monkeypatch, name: str) -> dict[str, bytes]:
    """What a regen with an empty cache writes for ``root`` as it is now."""
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / name))
    regen(root)
    return published(root)


@pytest.fixture
def sparked(monkeypatch):
    """The servers whose sparkline ``svg.sparkline`` drew, in order."""
    seen: list[str] = []
    real = svg.sparkline

    def spy(name, series):
        seen.append(name)
        return real(name, series)

    monkeypatch.setattr(svg, "sparkline", spy)
    return seen


def test_a_warm_regen_draws_no_page_and_gives_the_same_bytes(repo, drawn, sparked):
    regen(repo)
    cold = published(repo)
    assert sorted(drawn) == sorted(sparked) == ["lone", "ok", "srv"]
    regen(repo)
    assert sorted(drawn) == sorted(sparked) == ["lone", "ok", "srv"] and published(repo) == cold


def test_a_new_history_row_redraws_that_server_only(repo, drawn, sparked, tmp_path, monkeypatch):
    regen(repo)
    before = published(repo)
    b.write_history(repo, HISTORY + ["2026-06-15,srv,,,timeout,host"])
    regen(repo)
    assert sorted(drawn) == sorted(sparked) == ["lone", "ok", "srv", "srv"]
    after = published(repo)
    assert after["docs/servers/srv.md"] != before["docs/servers/srv.md"]
    assert after["docs/servers/srv.html"] != before["docs/servers/srv.html"]
    assert after["docs/trends/srv.svg"] != before["docs/trends/srv.svg"]
    assert after["docs/sparklines/srv.svg"] != before["docs/sparklines/srv.svg"]
    assert after == without_cache(repo, tmp_path, monkeypatch, "empty")


@pytest.fixture
def boards(monkeypatch):
    """One item per rendering of the leaderboard or the dashboard."""
    seen: list[str] = []
    for module, name in ((leaderboard, "render_md"), (leaderboard, "render_csv"), (dashboard, "render")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *args, _real=real, _name=name, **kwargs:
                            seen.append(_name) or _real(*args, **kwargs))
    return seen


def test_a_warm_regen_renders_no_board_and_a_new_history_row_all_again(repo, boards, tmp_path, monkeypatch):
    regen(repo)
    first = published(repo)
    regen(repo)
    assert sorted(boards) == ["render", "render_csv", "render_md"] and published(repo) == first
    b.write_history(repo, HISTORY + ["2026-06-15,srv,1990,1,measured,host"])
    regen(repo)
    assert len(boards) == 6
    after = published(repo)
    assert after["docs/index.html"] != first["docs/index.html"]  # its trend holds every point
    assert after == without_cache(repo, tmp_path, monkeypatch, "empty")


@pytest.mark.parametrize("plant", ["tampered", "not texts"])
def test_a_planted_board_entry_is_a_miss(repo, boards, tmp_path, monkeypatch, plant):
    regen(repo)
    right = without_cache(repo, tmp_path, monkeypatch, "other")
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    entry = next(p for p in regen_cache.folder(repo, "pages").iterdir() if b'"dashboard"' in p.read_bytes())
    head, _, body = entry.read_bytes().partition(b"\n")
    if plant == "tampered":  # its own key, a body that is not the one summed
        entry.write_bytes(head + b"\n" + body.replace(b"srv", b"evil"))
    else:  # whole and its own, but not the three texts
        bad = json.dumps({"md": "evil"}).encode()
        entry.write_bytes(f"outputs {entry.name} {regen_cache.hashlib.sha256(bad).hexdigest()}\n".encode() + bad)
    boards.clear()
    regen(repo)
    assert len(boards) == 3 and published(repo) == right


def test_a_changed_record_redraws_the_pages_that_show_it(repo, drawn, tmp_path, monkeypatch):
    regen(repo)
    b.write_record(repo, b.measured("ok", A))  # ok now costs what srv costs: srv's "cheaper" list changes
    regen(repo)
    assert sorted(drawn[3:]) == ["lone", "ok", "srv"]  # ranks and the peers of the category moved
    assert published(repo) == without_cache(repo, tmp_path, monkeypatch, "empty")


def test_a_cheaper_peer_that_changed_redraws_the_page_listing_it(repo, drawn, tmp_path, monkeypatch):
    regen(repo)
    before = published(repo)
    wider = {"type": "object", "properties": {"q": {"type": "string"}, "r": {"type": "string"}}}
    b.write_record(repo, b.measured("srv", [b.tool("alpha", schema=wider)]))  # still cheaper than ok, same descriptions
    regen(repo)
    after = published(repo)
    assert "ok" in drawn[3:] and after["docs/servers/srv.md"] != before["docs/servers/srv.md"]
    assert after == without_cache(repo, tmp_path, monkeypatch, "empty")


def test_other_code_draws_every_page_again(repo, drawn, monkeypatch):
    regen(repo)
    monkeypatch.setattr(regen_cache, "harness_key", lambda: "other code")
    regen(repo)
    assert sorted(drawn) == ["lone", "lone", "ok", "ok", "srv", "srv"]


def test_other_code_draws_every_page_but_converts_none_again(repo, monkeypatch):
    regen(repo)
    regen(repo)  # a warm run keeps the conversions of the pages it did not draw
    converted = []
    real = server_html.pages
    monkeypatch.setattr(server_html, "pages", lambda outputs, comps=None: converted.append(1) or real(outputs, comps))
    monkeypatch.setattr(regen_cache, "harness_key", lambda: "other code")
    regen(repo)
    assert converted == []  # the Markdown is unchanged: its HTML comes from the conversion cache


def test_pages_drawn_in_workers_give_what_one_process_gives(repo, tmp_path, monkeypatch):
    regen(repo)
    alone = published(repo)
    monkeypatch.setattr(server_html, "PARALLEL_FROM", 1)
    assert without_cache(repo, tmp_path, monkeypatch, "workers") == alone


@pytest.mark.parametrize("plant", ["another key", "tampered", "not JSON", "not texts", "nested", "oversized", "fifo", "link",
                                   "cut short"])
def test_a_planted_entry_is_a_miss(repo, drawn, tmp_path, monkeypatch, plant):
    regen(repo)
    right = without_cache(repo, tmp_path, monkeypatch, "other")
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    where = regen_cache.folder(repo, "pages")
    key, data = packs.holding(where, b"# srv\\n")
    head, _, body = data.partition(b"\n")
    texts = json.loads(body)
    lie = json.dumps({label: text.replace("srv", "evil") for label, text in texts.items()}).encode()
    shard = packs.shard_file(where, key)
    if plant == "another key":  # a whole entry, but another key's
        other = "0" * 64
        packs.plant(where, key, f"outputs {other} {regen_cache.hashlib.sha256(lie).hexdigest()}\n".encode() + lie)
    elif plant == "tampered":  # its own key, a body that is not the one summed
        packs.plant(where, key, head + b"\n" + lie)
    elif plant == "not JSON":
        bad = b"\xff\x00 not JSON"
        packs.plant(where, key, f"outputs {key} {regen_cache.hashlib.sha256(bad).hexdigest()}\n".encode() + bad)
    elif plant in ("not texts", "nested"):
        bad = json.dumps({"md": 1}).encode() if plant == "not texts" else b"[" * 100_000
        packs.plant(where, key, f"outputs {key} {regen_cache.hashlib.sha256(bad).hexdigest()}\n".encode() + bad)
    elif plant == "oversized":  # whole and its own, one byte over the bound
        monkeypatch.setattr(regen_cache, "MAX_OUTPUTS", len(data) - 1)
    elif plant == "cut short":  # the shard ends inside the entry
        whole = shard.read_bytes()
        shard.write_bytes(whole[:whole.index(data) + len(data) - 1])
    elif plant == "fifo":
        shard.unlink()
        os.mkfifo(shard)
    else:
        whole = shard.read_bytes()
        shard.unlink()
        (tmp_path / "elsewhere").write_bytes(whole)
        shard.symlink_to(tmp_path / "elsewhere")
    drawn.clear()
    regen(repo)
    assert "srv" in drawn and published(repo) == right
    if plant in ("another key", "tampered", "not JSON", "not texts", "nested"):  # (the others reach the shard's other entries)
        assert drawn == ["srv"]


def test_an_entry_larger_than_the_bound_is_not_kept(tmp_path, monkeypatch):
    kept = regen_cache.Outputs(tmp_path / "pages")
    monkeypatch.setattr(regen_cache, "MAX_OUTPUTS", 200)
    kept.put("a" * 64, {"md": "x" * 300})
    kept.put("b" * 64, {"md": "small"})
    kept.save()
    fresh = regen_cache.Outputs(tmp_path / "pages")
    assert fresh.get("a" * 64) is None and fresh.get("b" * 64) == {"md": "small"}


def test_another_tokenizer_release_is_other_page_code(monkeypatch):
    """A page's breakdown is counted with tiktoken: another release is not the code the kept pages were drawn with."""
    before = regen_cache.harness_key()
    monkeypatch.setattr(regen_cache.tiktoken, "__version__", "0.0.0-other")
    regen_cache.code_key.cache_clear()
    regen_cache.harness_key.cache_clear()
    try:
        assert regen_cache.harness_key() != before
    finally:
        monkeypatch.undo()
        regen_cache.code_key.cache_clear()
        regen_cache.harness_key.cache_clear()


@pytest.mark.parametrize("parallel_from", [1, 1000])
def test_a_run_reads_each_html_shard_once_in_workers_or_not(repo, tmp_path, monkeypatch, parallel_from):
    # a worker reading them again would hold its own copy: up to the bound of a pack in every worker
    regen(repo)
    log = tmp_path / "reads"
    real = cache_shards.read_entry

    def logged(path, limit):
        if path.parent == server_html.folder(repo):
            with open(log, "a") as f:
                f.write(f"{path.name}\n")
        return real(path, limit)
    monkeypatch.setattr(cache_shards, "read_entry", logged)
    monkeypatch.setattr(server_html, "PARALLEL_FROM", parallel_from)
    b.write_history(repo, HISTORY + ["2026-06-15,srv,990,1,measured,host", "2026-06-15,ok,41,2,measured,host"])
    regen(repo)
    reads = log.read_text().split()
    assert sorted(reads) == sorted(set(reads)) == [f"pack-{d:x}" for d in range(cache_shards.SHARDS)]


def test_a_page_key_takes_its_series_by_the_digest_given_for_it():
    from harness.db.history import HistoryRow
    from harness.pages.regen import _digest
    from harness.pages.series import comparable

    one = comparable([HistoryRow("2026-06-01", "srv", 900, 1, "measured", "host")])
    other = comparable([HistoryRow("2026-06-01", "srv", 950, 1, "measured", "host")])
    assert _digest(("srv", one)) != _digest(("srv", other))
    # what the digest given for a series stands for is not pickled again
    assert _digest(("srv", one), {id(one): b"same"}) == _digest(("srv", other), {id(other): b"same"})
    assert _digest(("srv", one), {id(one): b"same"}) != _digest(("srv", one), {id(one): b"changed"})
