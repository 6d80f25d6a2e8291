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


def test_unchanged_file_keeps_its_inode_and_a_changed_one_is_replaced(tmp_path):
    same, longer, shorter = tmp_path / "same.txt", tmp_path / "longer.txt", tmp_path / "shorter.txt"
    for path in (same, longer, shorter):
        path.write_bytes(b"abc")
    inodes = {path: path.stat().st_ino for path in (same, longer, shorter)}
    assert atomic.write_many({same: b"abc", longer: b"abcd", shorter: b"ab"}) == [longer, shorter]
    assert same.stat().st_ino == inodes[same]
    assert longer.read_bytes() == b"abcd" and longer.stat().st_ino != inodes[longer]
    assert shorter.read_bytes() == b"ab" and shorter.stat().st_ino != inodes[shorter]


def test_a_link_at_the_target_is_replaced_not_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_bytes(b"page")  # the bytes the target should hold: still not "unchanged"
    target = tmp_path / "docs" / "page.html"
    target.parent.mkdir()
    target.symlink_to(elsewhere)
    assert atomic.write_many({target: b"page"}) == [target]
    assert not target.is_symlink() and target.read_bytes() == b"page"
    assert elsewhere.read_bytes() == b"page"


@pytest.mark.timeout(60)  # a write_many that opened the fifo would wait for a writer forever
def test_a_fifo_at_the_target_is_replaced_without_waiting(tmp_path):
    target = tmp_path / "page.html"
    os.mkfifo(target)
    assert atomic.write_many({target: b"page"}) == [target]
    assert target.is_file() and target.read_bytes() == b"page"


def test_interruption_while_writing_leaves_no_temp_files(tmp_path, monkeypatch):
    first, second = tmp_path / "a.txt", tmp_path / "b" / "c.txt"
    first.write_bytes(b"old")
    real_fdopen = os.fdopen
    opened = []

    def interrupted(fd, *args, **kwargs):
        handle = real_fdopen(fd, *args, **kwargs)
        if "w" in str(args[:1]):
            opened.append(fd)
            if len(opened) == 2:
                handle.close()
                raise KeyboardInterrupt
        return handle

    monkeypatch.setattr(os, "fdopen", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_many({first: b"new", second: b"x"})
    assert first.read_bytes() == b"old"
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == ["a.txt"]
