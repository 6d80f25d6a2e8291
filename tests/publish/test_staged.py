"""harness/publish/staged.py: all-or-nothing staging, one sync, unchanged files untouched."""

from __future__ import annotations

import os

import pytest

from harness.publish import staged


def test_writes_changed_files_only(tmp_path):
    same, new = tmp_path / "a/same.txt", tmp_path / "b/c/new.txt"
    same.parent.mkdir()
    same.write_bytes(b"same")
    before = same.stat().st_mtime_ns
    assert staged.write_all({same: b"same", new: b"new"}) == [new]
    assert new.read_bytes() == b"new" and same.stat().st_mtime_ns == before


def test_failure_while_staging_leaves_everything_as_it_was(tmp_path, monkeypatch):
    old = tmp_path / "old.txt"
    old.write_bytes(b"old")

    def broken_sync():
        raise OSError("disk gone")

    monkeypatch.setattr(os, "sync", broken_sync)
    with pytest.raises(OSError, match="disk gone"):
        staged.write_all({old: b"new", tmp_path / "other.txt": b"x"})
    assert old.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]
