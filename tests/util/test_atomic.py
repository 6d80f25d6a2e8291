"""harness/util/atomic.py: whole files or nothing; ``write_many`` syncs once and leaves unchanged
files untouched; written files get ordinary permissions."""

from __future__ import annotations

import os

import pytest

from harness.util import atomic


def test_writes_changed_files_only(tmp_path):
    same, new = tmp_path / "a/same.txt", tmp_path / "b/c/new.txt"
    same.parent.mkdir()
    same.write_bytes(b"same")
    before = same.stat().st_mtime_ns
    assert atomic.write_many({same: b"same", new: b"new"}) == [new]
    assert new.read_bytes() == b"new" and same.stat().st_mtime_ns == before


def test_failure_while_staging_leaves_everything_as_it_was(tmp_path, monkeypatch):
    old = tmp_path / "old.txt"
    old.write_bytes(b"old")

    def broken_sync():
        raise OSError("disk gone")

    monkeypatch.setattr(os, "sync", broken_sync)
    with pytest.raises(OSError, match="disk gone"):
        atomic.write_many({old: b"new", tmp_path / "other.txt": b"x"})
    assert old.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]


def test_published_files_get_ordinary_permissions(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    one = atomic.write_text(tmp_path / "one.json", "{}")
    many = atomic.write_many({tmp_path / "page.html": b"<p>"})
    for path in [one, *many]:
        assert path.stat().st_mode & 0o777 == 0o666 & ~mask
