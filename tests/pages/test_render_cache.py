"""Server page HTML converted once per content (harness/pages/server_html.py): same bytes as a
direct conversion, cold or warm, serial or in worker processes; only changed pages converted again;
a cache that cannot be used costs time, never a wrong page."""

from __future__ import annotations

import ast
import os

import pytest

from harness.pages import server_html
from tests.pages import packs


def pages(n: int, extra: str = "") -> dict[str, str]:
    return {f"docs/servers/s{i:03d}.md": f"# s{i:03d}\n\n| a | b |\n|---|---|\n| {i} | [x](s{i + 1:03d}.md){extra} |\n"
            for i in range(n)}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    return tmp_path / "repo"


class Counting:
    """``server_html.pages`` counting its calls (in-process only: fewer than PARALLEL_FROM pages)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, outputs):
        self.calls += 1
        return server_html.pages(outputs)


def test_warm_runs_convert_only_what_changed(cache):
    first = pages(5)
    direct = server_html.pages(first)
    convert = Counting()
    assert server_html.memo_map(cache, first, convert) == direct and convert.calls == 5
    assert server_html.memo_map(cache, first, convert) == direct and convert.calls == 5  # all hits
    changed = dict(first, **{"docs/servers/s002.md": first["docs/servers/s002.md"] + "\nmore\n"})
    assert server_html.memo_map(cache, changed, convert) == server_html.pages(changed) and convert.calls == 6
    assert len(packs.entries(server_html.folder(cache))) == 5  # the old s002 entry was pruned


def test_another_renderer_misses(cache, monkeypatch):
    convert = Counting()
    server_html.memo_map(cache, pages(3), convert)
    monkeypatch.setattr(server_html, "fingerprint", lambda: "another renderer")
    server_html.memo_map(cache, pages(3), convert)
    assert convert.calls == 6


def test_workers_give_the_same_bytes(cache):
    many = pages(server_html.PARALLEL_FROM + 6, extra=" *x*")
    assert server_html.memo_map(cache, many, server_html.pages) == server_html.pages(many)


def test_an_unusable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(blocker))
    assert server_html.memo_map(tmp_path, pages(3), server_html.pages) == server_html.pages(pages(3))


@pytest.mark.parametrize("damage", [b"\xff not json", b"[" * 100_000, b'{"a": 1}'])
def test_a_damaged_entry_is_converted_again(cache, damage):
    server_html.memo_map(cache, pages(2), server_html.pages)
    where = server_html.folder(cache)
    for key in packs.entries(where):
        packs.plant(where, key, damage)
    convert = Counting()
    assert server_html.memo_map(cache, pages(2), convert) == server_html.pages(pages(2)) and convert.calls == 2


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_an_entry_that_is_not_a_regular_file_is_converted_again(cache, tmp_path, plant):
    server_html.memo_map(cache, pages(2), server_html.pages)
    for path in server_html.folder(cache).glob("pack-*"):
        data = path.read_bytes()
        path.unlink()
        if plant == "fifo":
            os.mkfifo(path)  # would block a plain read
        else:
            (tmp_path / path.name).write_bytes(data)
            path.symlink_to(tmp_path / path.name)
    convert = Counting()
    assert server_html.memo_map(cache, pages(2), convert) == server_html.pages(pages(2)) and convert.calls == 2


def test_the_fingerprint_covers_every_module_the_conversion_draws_with():
    """The chart is drawn from a ``Composition`` (field order, keys, parts): code the Markdown need not show."""
    tree = ast.parse(open(server_html.__file__, encoding="utf-8").read())
    imported = {f"{node.module}.{alias.name}" if node.module in ("harness.pages", "harness.util") else node.module
                for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness")
                for alias in node.names}
    stores = {"harness.pages.regen_cache", "harness.pages.cache_shards", "harness.util.forkpool"}  # where entries live and how work is spread
    drawn_with = {m for m in imported if m.count(".") == 2} - stores
    assert drawn_with <= set(server_html._RENDERER_MODULES)
