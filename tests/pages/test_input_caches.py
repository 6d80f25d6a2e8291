"""What regen derives from unchanged inputs, kept in its cache: a catalog text that passed every check with
its document (regen_cache.Catalogs), the capture index by the text of every tool-vectors file. A warm regen
neither parses nor checks the catalog again nor rebuilds the index, and writes the same bytes; a changed
input is derived again; an entry that is not whole and its own, or a cache that cannot be written, only
costs time."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from harness.db import catalog
from harness.db.catalog import CatalogError
from harness.pages import regen_cache, tool_vectors
from harness.pages.regen import regen
from tests.pages import builders as b
from tests.pages import packs
from tests.pages.test_page_cache import published, without_cache


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [b.entry("srv", category="files"), b.entry("ok", category="other")])
    b.write_record(root, b.measured("srv", [b.tool("alpha")]))
    b.write_record(root, b.measured("ok", [b.tool("beta")]))
    b.write_history(root, ["2026-06-01,srv,900,1,measured,host", "2026-06-01,ok,40,1,measured,host"])
    return root


def calls(monkeypatch, owner, name: str) -> list[int]:
    """One item per call of ``owner.name`` from now on (which still runs)."""
    seen: list[int] = []
    real = getattr(owner, name)

    def spy(*args, **kwargs):
        seen.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return seen


@pytest.fixture
def checked(monkeypatch):
    """How many times a catalog text was parsed and checked."""
    return calls(monkeypatch, catalog, "_checked")


@pytest.fixture
def indexed(monkeypatch):
    """How many times the capture index was built."""
    return calls(monkeypatch, tool_vectors, "capture_index_text")


def _entry(root, kind="catalog"):
    """``(folder, key, bytes)`` of the one entry the cache of ``kind`` holds."""
    where = regen_cache.folder(root, kind)
    (key, data), = packs.entries(where).items()
    return where, key, data


def test_a_warm_regen_checks_the_catalog_once_and_gives_the_same_bytes(repo, checked):
    regen(repo)
    first = published(repo)
    regen(repo)
    assert len(checked) == 1 and published(repo) == first


def test_a_changed_catalog_is_checked_again(repo, checked, tmp_path, monkeypatch):
    regen(repo)
    b.write_catalog(repo, [b.entry("srv", category="other"), b.entry("ok", category="other")])
    regen(repo)
    assert len(checked) == 2
    got = published(repo)
    assert without_cache(repo, tmp_path, monkeypatch, "empty") == got


def test_a_bad_catalog_after_a_good_one_is_refused(repo):
    regen(repo)
    b.write_catalog(repo, [b.entry("srv", category="files"), b.entry("srv", category="other")])
    with pytest.raises(CatalogError, match="duplicate"):
        regen(repo)


@pytest.mark.parametrize("plant", ["another key", "tampered", "not a document", "not a mapping", "link"])
def test_a_planted_entry_is_a_miss(repo, checked, tmp_path, monkeypatch, plant):
    regen(repo)
    right = published(repo)
    where, key, data = _entry(repo)
    head, _, body = data.partition(b"\n")
    lie = json.dumps({"document": json.loads(body)["document"].replace('"srv"', '"evil"')}).encode()
    summed = f" {regen_cache.hashlib.sha256(lie).hexdigest()}\n".encode()
    if plant == "another key":
        packs.plant(where, key, b"outputs " + b"0" * 64 + summed + lie)
    elif plant == "tampered":
        packs.plant(where, key, head + b"\n" + lie)
    elif plant in ("not a document", "not a mapping"):
        bad = json.dumps({"document": "{not JSON" if plant == "not a document" else "[1]"}).encode()
        packs.plant(where, key, f"outputs {key} {regen_cache.hashlib.sha256(bad).hexdigest()}\n".encode() + bad)
    else:
        shard = packs.shard_file(where, key)
        whole = shard.read_bytes()
        shard.unlink()
        (tmp_path / "elsewhere").write_bytes(whole)
        shard.symlink_to(tmp_path / "elsewhere")
    regen(repo)
    assert len(checked) == 2 and published(repo) == right


@pytest.mark.parametrize("kind", ["catalog", "index"])
def test_a_cache_that_cannot_be_written_only_costs_time(repo, checked, indexed, tmp_path, monkeypatch, kind):
    right = without_cache(repo, tmp_path, monkeypatch, "empty")
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    where = regen_cache.folder(repo, kind)
    where.parent.mkdir(parents=True)
    where.write_text("a file where the folder goes\n")  # nothing under it can be read or written, even by root
    checked.clear()
    indexed.clear()
    for _ in range(2):
        regen(repo)
        assert published(repo) == right
    assert len(checked if kind == "catalog" else indexed) == 2


@pytest.mark.parametrize("value", [{1: "a"}, {"a": dt.date(2026, 1, 1)}, {"a": (1, 2)}, {"a": float("nan")},
                                   {"a": [float("inf")]}])
def test_a_document_json_cannot_hold_exactly_is_not_kept(tmp_path, value):
    kept = regen_cache.Catalogs(tmp_path / "catalog")
    kept.put("servers: []\n", {"servers": [], "x": value})
    kept.save()
    assert regen_cache.Catalogs(tmp_path / "catalog").get("servers: []\n") is None


def test_a_kept_document_reads_back_for_its_own_text_only(tmp_path):
    kept = regen_cache.Catalogs(tmp_path / "catalog")
    document = {"servers": [{"name": "a", "timeoutSeconds": 1.5, "needsGit": True, "notes": None}]}
    kept.put("text a\n", document)
    kept.save()
    fresh = regen_cache.Catalogs(tmp_path / "catalog")
    assert fresh.get("text a\n") == document and fresh.get("text b\n") is None


def test_a_warm_regen_builds_the_capture_index_once(repo, indexed):
    regen(repo)
    first = published(repo)
    regen(repo)
    assert len(indexed) == 1 and published(repo) == first


def _add_older_vector(root, name: str) -> None:
    """An older capture put in front of ``name``'s tool vectors (the index then names it)."""
    path = root / "results" / name / "tool-vectors.json"
    held = tool_vectors.read(path, name)
    older = {**held.vectors[0].fields, "date": "2026-05-01", "canonicalSha256": "ab" * 32,
             "tools": [list(t.values()) for t in held.vectors[0]["tools"]]}
    lines = [json.dumps(older, separators=(",", ":"))] + [v.line for v in held.vectors]
    path.write_text(tool_vectors.file_text(name, lines), encoding="utf-8")


def test_changed_tool_vectors_rebuild_the_capture_index(repo, indexed, tmp_path, monkeypatch):
    regen(repo)
    _add_older_vector(repo, "srv")
    regen(repo)
    got = published(repo)
    assert len(indexed) == 2 and "ab" * 32 in got["results/capture-index.json"].decode()
    assert without_cache(repo, tmp_path, monkeypatch, "empty") == got


@pytest.mark.parametrize("plant", ["tampered", "not an index", "oversized"])
def test_a_planted_index_is_a_miss(repo, indexed, tmp_path, monkeypatch, plant):
    regen(repo)
    right = published(repo)
    where, key, data = _entry(repo, "index")
    head, _, body = data.partition(b"\n")
    if plant == "tampered":
        packs.plant(where, key, head + b"\n" + body.replace(b"srv", b"evl"))
    elif plant == "not an index":
        bad = json.dumps({"md": "x"}).encode()
        packs.plant(where, key, f"outputs {key} {regen_cache.hashlib.sha256(bad).hexdigest()}\n".encode() + bad)
    else:
        monkeypatch.setattr(regen_cache, "MAX_INDEX", len(data) - 1)
    regen(repo)
    assert len(indexed) == 2 and published(repo) == right
