"""Every reader of a config's untrusted structure ends in bounded time and memory with a one-line
error or the right result: YAML alias bombs under the alias cap (many aliases of one big node, and
nested fan-out), a 25 MB TOML, deep nesting in every format, and a config value of shared structure
never turned into text before it is cut. Memory is measured with tracemalloc; each test has a
timeout as a hang guard only.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from harness.audit import discovery, readers
from harness.audit.clients.config_format import Context, Layout, Shape, build_entry

pytestmark = pytest.mark.timeout(120)
PEAK_BYTES = 64 * 1024 * 1024


def _peak(work):
    """``(result, peak traced bytes)`` of ``work()``."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _fanout(levels: int = 9, width: int = 9) -> str:
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def _many(aliases: int = 99, items: int = 3000) -> str:
    big = ", ".join(f'"item{i}"' for i in range(items))
    return f"big: &big [{big}]\nmany: [{', '.join(['*big'] * aliases)}]\n"


BOMBS = {
    "nested fan-out (81 aliases, 9^9 nodes)": _fanout(),
    "many aliases of one big node (99 aliases)": _many(),
    "fan-out inside an extension's args": _fanout() + "extensions:\n  x: {type: stdio, cmd: node, args: *a9}\n",
}


@pytest.mark.parametrize("name", list(BOMBS))
@pytest.mark.parametrize("where", ["goose", "continue", "config"])
def test_a_yaml_alias_bomb_under_the_alias_cap_is_a_one_line_error(tmp_path, name, where):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    path = {"goose": home / ".config" / "goose" / "config.yaml", "continue": home / ".continue" / "config.yaml",
            "config": project / "servers.yaml"}[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BOMBS[name])
    assert BOMBS[name].count("*") < readers.MAX_YAML_ALIASES
    layout = Layout(home=home, cwd=project, platform="linux", environ={}, system_root=tmp_path / "sys")
    files, peak = _peak(lambda: discovery.discover(layout, [path] if where == "config" else [],
                                                    search=where != "config"))
    found = next(f for f in files if Path(f.path) == path)
    assert found.state == "unreadable" and found.entries == []
    assert "\n" not in found.error and "aliases are expanded" in found.error, found.error
    assert peak < PEAK_BYTES, f"{peak:,} bytes"


def test_a_legitimate_yaml_with_anchors_still_reads(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("base: &env {A: '1'}\nextensions:\n  x: {type: stdio, cmd: node, args: [s.js], envs: *env}\n"
                    "  y: {type: stdio, cmd: node, args: [t.js], envs: *env}\n")
    assert readers.load(path, "yaml")["extensions"]["y"]["envs"] == {"A": "1"}


@pytest.mark.parametrize("kind, text", [
    ("toml", "x = " + "[" * 5000 + "]" * 5000 + "\n"),
    ("toml", "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n"),
    ("json", "[" * 100_000 + "]" * 100_000),
    ("json", "// jsonc\n" + "[" * 20_000 + "]" * 20_000),
    ("yaml", "a:\n" + "".join("  " * i + "- \n" for i in range(1, 100))),
    ("yaml", "[" * 10_000 + "]" * 10_000),
])
@pytest.mark.slow
def test_deep_nesting_is_a_one_line_error(tmp_path, kind, text):
    path = tmp_path / f"deep.{kind}"
    path.write_text(text)
    with pytest.raises(readers.ConfigError) as caught:
        _peak(lambda: readers.load(path, kind))
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize("kind, text", [
    ("toml", "a = 1" + "0" * 100_000 + "\n"),        # past Python's digit limit for int()
    ("toml", "[mcp_servers.x]\nstartup_timeout_sec = 9" + "9" * 5000 + "\n"),
    ("yaml", "a: 1" + "0" * 100_000 + "\n"),
    ("json", '{"a": 1' + "0" * 5000 + "}"),
    ("json", '// jsonc\n{"a": 1' + "0" * 5000 + "}"),
])
def test_a_number_too_large_to_read_is_a_one_line_error(tmp_path, kind, text):
    path = tmp_path / f"big.{kind}"
    path.write_text(text)
    with pytest.raises(readers.ConfigError) as caught:
        _peak(lambda: readers.load(path, kind))
    assert "\n" not in str(caught.value) and str(path) in str(caught.value) and "000000" not in str(caught.value)


@pytest.mark.parametrize("megabytes", [25, 1])
def test_a_large_codex_toml_is_refused_before_it_is_parsed(tmp_path, megabytes):
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".codex").mkdir(parents=True)
    project.mkdir()
    line = 'k{} = "' + "x" * 100 + '"\n'
    body = "".join(line.format(i) for i in range(megabytes * 1024 * 1024 // len(line) + 1))
    (home / ".codex" / "config.toml").write_text(body)
    layout = Layout(home=home, cwd=project, platform="linux", environ={}, system_root=tmp_path / "sys")
    files, peak = _peak(lambda: discovery.discover(layout))
    codex = next(f for f in files if f.path.endswith(".codex/config.toml") and "home" in f.path)
    assert codex.state == "unreadable" and "over the 524,288-byte limit" in codex.error and "\n" not in codex.error
    assert peak < PEAK_BYTES, f"{peak:,} bytes"


def _shared_bomb(levels: int = 9, width: int = 9) -> list:
    """What PyYAML builds from an alias bomb: nine lists of nine references to one list, nine deep."""
    node: list = ["lol"]
    for _ in range(levels):
        node = [node] * width
    return node


@pytest.mark.parametrize("field", ["type", "command"])
def test_a_shared_structure_value_is_never_turned_into_text(tmp_path, field):
    raw = {"command": "node", field: _shared_bomb()}
    ctx = Context("kiro", str(tmp_path / "mcp.json"), "user", Layout(home=tmp_path, cwd=tmp_path, environ={}))
    entry, peak = _peak(lambda: build_entry("x", raw, Shape(), ctx, "mcpServers.x"))
    assert entry.problems and all(len(p) < 200 for p in entry.problems), entry.problems
    assert peak < PEAK_BYTES


@pytest.mark.parametrize("value, words", [
    (_shared_bomb(), "a list of 9 item(s)"), ({"a": _shared_bomb()}, "an object of 1 key(s)"),
    ("x" * 10_000, "x" * 40 + "…"), (10 ** 5000, "a large number"), (None, "None"), (True, "True"),
], ids=["shared-list", "shared-object", "long-string", "huge-int", "null", "bool"])
def test_brief_cuts_before_it_writes(value, words):
    assert readers.brief(value) == words


def test_a_json_config_nested_within_the_parsers_reach_reads(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"command": "node", "args": ["a"]}}}))
    assert readers.load(path, "json")["mcpServers"]["x"]["args"] == ["a"]


@pytest.mark.parametrize("text", ["[" + "[]," * 2_100_000 + "[]]", '{"a": [' + "{}," * 2_100_000 + "{}]}"])
def test_a_json_of_millions_of_containers_is_refused_before_it_is_parsed(tmp_path, text):
    path = tmp_path / "big.json"
    path.write_text(text)
    def attempt():
        try:
            readers.load(path, "json")
        except readers.ConfigError as exc:
            return exc
        return None

    error, peak = _peak(attempt)
    assert error is not None and "objects and arrays" in str(error) and "\n" not in str(error)
    assert peak < PEAK_BYTES, f"{peak:,} bytes"


@pytest.mark.slow
def test_a_block_folder_of_many_files_is_listed_only_so_far(tmp_path, monkeypatch):
    import os

    from harness.audit.clients import continue_dev

    folder = tmp_path / "project" / ".continue" / "mcpServers"
    folder.mkdir(parents=True)
    for i in range(continue_dev.MAX_LISTED + 5_000):
        (folder / f"{i:06d}.txt").touch()
    looked, scandir = [], os.scandir

    class Counting:  # os.scandir, counting the entries the reader takes from it
        def __init__(self, path):
            self.inner = scandir(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.inner.close()

        def __iter__(self):
            for entry in self.inner:
                looked.append(entry.name)
                yield entry

    monkeypatch.setattr(continue_dev.os, "scandir", Counting)
    layout = Layout(home=tmp_path / "home", cwd=tmp_path / "project", platform="linux", environ={})
    found = continue_dev.candidates(layout)
    assert 0 < len(looked) <= continue_dev.MAX_LISTED and len(found) <= 1 + continue_dev.MAX_BLOCK_FILES
