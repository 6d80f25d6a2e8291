"""``harness.readings.store.read``, the one way into the run files: a hostile file there (a link, a FIFO,
a huge or broken file) is a named ``ReadingsError`` read through nothing and never in full."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.readings import store
from harness.util import bounded

GOOD = json.dumps({"method": "tools-delta/v1", "rows": []})


def _plant(root: Path, outside: Path, kind: str) -> None:
    path = store.path_for(root, "divergence")
    if kind == "results folder linked":
        (outside / path.name).write_text(GOOD)
        path.parent.symlink_to(outside)
        return
    path.parent.mkdir()
    {"file linked": lambda: path.symlink_to(outside / "good.json"),
     "FIFO": lambda: os.mkfifo(path),
     "huge": lambda: os.truncate(path.write_bytes(b"") or path, bounded.MAX_RECORD_BYTES + 1),
     "not UTF-8": lambda: path.write_bytes(b'{"method": "\xff"}'),
     "not JSON": lambda: path.write_text("{not json"),
     "nested too deep": lambda: path.write_text("[" * 10_000 + "]" * 10_000),
     "off schema": lambda: path.write_text('{"method": "other/v1", "rows": []}')}[kind]()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind, words", [
    ("file linked", "is a symbolic link; a database reader never reads through one"),
    ("results folder linked", "results is a symbolic link"),
    ("FIFO", "not a regular file (a FIFO)"),
    ("huge", f"larger than {bounded.MAX_RECORD_BYTES} bytes"),
    ("not UTF-8", "cannot read"),
    ("not JSON", "not JSON"),
    ("nested too deep", "not JSON"),
    ("off schema", "'tools-delta/v1' was expected"),
])
def test_a_hostile_run_file_is_a_named_error(tmp_path, kind, words):
    root, outside = tmp_path / "repo", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "good.json").write_text(GOOD)
    _plant(root, outside, kind)
    with pytest.raises(store.ReadingsError) as caught:
        store.read(root, "divergence")
    assert words in str(caught.value)


def test_a_missing_run_file_is_none_and_a_good_one_is_read(tmp_path):
    assert store.read(tmp_path, "divergence") is None
    store.path_for(tmp_path, "divergence").parent.mkdir()
    store.path_for(tmp_path, "divergence").write_text(GOOD)
    assert store.read(tmp_path, "divergence") == json.loads(GOOD)
