"""harness/util/yamlsafe.py and harness/util/bounded.py: YAML and files someone else wrote, in bounded
time and memory. Every document here is one a plain ``yaml.safe_load`` either
accepts identically or turns into minutes of work, a RecursionError or a ValueError."""

from __future__ import annotations

import os

import pytest
import yaml

from harness.util import bounded, yamlsafe
from harness.util.yamlsafe import Bounds, YAMLLimitError

LAUGHS = "\n".join([f'a: &a [{",".join(["lol"] * 9)}]'] + [
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]) + "\n"


def refused(text: str, bounds: Bounds = yamlsafe.DEFAULT_BOUNDS) -> YAMLLimitError:
    with pytest.raises(YAMLLimitError) as info:
        yamlsafe.load(text, bounds)
    return info.value


@pytest.mark.parametrize("text", [
    "servers:\n  - name: a\n    command: npx -y a\n    env: [A, B]\n",
    "a: &x {k: 1}\nb: *x\nc: [*x, *x]\n",
    "m: &m {a: 1}\nn:\n  <<: *m\n  b: 2\n",
    "when: 2026-11-30\nn: 0x1f\nf: 1.5e3\nsexagesimal: 1:30\n",
    "",
], ids=["catalog", "aliases", "merge-key", "scalars", "empty"])
def test_ordinary_documents_load_as_safe_load_does(text):
    assert yamlsafe.load(text) == yaml.safe_load(text)


@pytest.mark.parametrize("text", [
    LAUGHS,                                                              # the classic, ~350 bytes
    "servers:\n  - name: x\n    notes:\n" + "".join("      " + line + "\n" for line in LAUGHS.splitlines()),
    "a: &a {x: 1, y: 2, z: 3}\n" + "".join(                              # mappings through merge keys
        f"{c}: &{c} {{<<: [*{p}], k{i}: [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]}}\n"
        for i, (p, c) in enumerate(zip("abcdefgh", "bcdefghi"))),
    "a: &a [x, x]\n" + "".join(f"a{i + 1}: &a{i + 1} [*a{i if i else ''}, *a{i if i else ''}]\n"
                                for i in range(40)).replace("*a0", "*a"),  # a long doubling chain
], ids=["laughs", "laughs-in-an-entry", "merge-bomb", "doubling-chain"])
def test_alias_bombs_are_refused_quickly(text):
    error = refused(text)
    assert "nodes once aliases are expanded" in str(error) and error.line


@pytest.mark.parametrize("text", [
    "&a [*a]", "a: &a {b: *a}", "- &a\n  - x\n  - *a\n",
], ids=["sequence", "mapping", "block"])
def test_recursive_aliases_are_refused(text):
    assert "recursive alias" in str(refused(text))


@pytest.mark.parametrize("text,path", [
    ("x: " + "[" * 20_000 + "]" * 20_000, ("x",)),
    ("x: " + "{a: " * 20_000 + "1" + "}" * 20_000, ("x",)),
    ("x:\n  " + "- " * 20_000 + "leaf\n", ("x",)),
    ("servers:\n  - name: deep\n    notes: " + "[" * 500 + "]" * 500 + "\n", ("servers", 0, "notes")),
], ids=["flow-sequences", "flow-mappings", "block-sequences", "inside-an-entry"])
def test_deep_nesting_is_refused_with_its_path(text, path):
    error = refused(text, Bounds(max_depth=64))
    assert "nested deeper than 64 levels" in str(error)
    assert error.path[: len(path)] == path and error.line


@pytest.mark.parametrize("text", [
    "n: " + "9" * 5000, "n: -" + "1" * 5000, "n: " + "1" * 5000 + ".5", "n: 0x" + "f" * 5000,
    "n: " + ":".join(["59"] * 2000), 'n: !!int "' + "7" * 5000 + '"', "n: " + "1_" * 2500 + "1",
], ids=["int", "negative", "float", "hex", "sexagesimal", "explicit-tag", "underscores"])
def test_long_numbers_are_refused(text):
    error = refused(text)
    assert "a number longer than 32 characters" in str(error) and error.path == ("n",)


def test_a_long_string_that_looks_like_digits_is_fine_when_quoted():
    assert yamlsafe.load('n: "' + "9" * 5000 + '"') == {"n": "9" * 5000}


def test_size_is_bounded_before_parsing(tmp_path):
    assert "larger than 100 bytes" in str(refused("x: " + "y" * 200, Bounds(max_bytes=100)))
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(1 << 30)  # sparse: refused by its size, never read
    with pytest.raises(YAMLLimitError, match="larger than"):
        yamlsafe.read_text(big, 1 << 20)


def test_duplicate_keys_are_collected(tmp_path):
    root, loader = yamlsafe.compose("a: 1\nb: 2\na: 3\n")
    try:
        assert yamlsafe.construct(loader, root) == {"a": 3, "b": 2}
        assert [(node.start_mark.line, key) for node, key in loader.duplicates] == [(2, "a")]
    finally:
        loader.dispose()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
def test_only_regular_files_are_read_and_never_block(kind, tmp_path):
    path = {"fifo": tmp_path / "fifo", "dev-zero": "/dev/zero", "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)  # no writer: opening it for reading in blocking mode would wait forever
    with pytest.raises(OSError, match="not a regular file"):
        bounded.read_regular(path, 1024)
