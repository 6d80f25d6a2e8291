"""harness/util/atomic.py: whole files or nothing; ``write_many`` syncs once and leaves unchanged
files untouched; written files get ordinary permissions."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.util import atomic, forkpool


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


def test_a_file_that_cannot_be_staged_leaves_no_temp_file_and_replaces_nothing(tmp_path):
    old, later = tmp_path / "a.txt", tmp_path / "z.txt"
    old.write_bytes(b"old")
    too_long = tmp_path / ("m" * 250)  # a valid name whose temporary (".NAME.XXXXXXXX.tmp") is too long
    with pytest.raises(OSError, match="too long"):
        atomic.write_many({old: b"new", too_long: b"x", later: b"z"})
    assert old.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]



def test_a_folder_where_a_file_goes_fails_the_write_before_any_file_is_renamed(tmp_path):
    first, folder, last = tmp_path / "a.txt", tmp_path / "m.txt", tmp_path / "z.txt"
    first.write_bytes(b"old")
    (folder / "inside").mkdir(parents=True)  # a careless mkdir, or a planted folder
    with pytest.raises(IsADirectoryError, match="m.txt"):
        atomic.write_many({first: b"new", folder: b"x", last: b"z"})
    assert first.read_bytes() == b"old" and not last.exists()  # not half the files new, half old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "m.txt"]


# Run in a process of its own: a thread of this test process (xdist) would keep write_many from forking.
_FORKED = """
import os, signal, sys, time
from pathlib import Path
from harness.util import atomic, forkpool

root, case = Path(sys.argv[1]), sys.argv[2]
atomic._FORK_LEAST = 1

def tree():
    same = [root / f"f{n:02d}" / "same.txt" for n in range(0, 40, 2)]
    old = [root / f"f{n:02d}" / "old.txt" for n in range(1, 40, 2)]
    for path in same + old:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(path.parent.name.encode())
    files = {path: path.parent.name.encode() for path in same}
    files |= {path: b"new " + path.parent.name.encode() for path in old}
    files |= {root / "new" / f"{n}.txt": b"n" for n in range(30)}
    return same, old, files

def temps():
    return sorted(str(p) for p in root.rglob("*") if p.name.endswith(".tmp"))

def as_before(same, old):
    return all(p.read_bytes() == p.parent.name.encode() for p in same + old) and not list(root.glob("new/*"))

def interrupt(*_):
    raise KeyboardInterrupt

def fails(error):  # write_many(files) raises error (its message), every file left as it was
    try:
        atomic.write_many(files)
    except error as exc:
        assert as_before(same, old)
        return str(exc)
    raise AssertionError(f"no {error.__name__}")

same, old, files = tree()
assert forkpool.forks(len(files), atomic._FORK_LEAST), "would not fork"
if case == "changed":
    elsewhere = root / "elsewhere.txt"
    elsewhere.write_bytes(b"f00")
    same[0].unlink()
    same[0].symlink_to(elsewhere)  # holds the bytes through a link: still replaced
    inodes = {p: p.stat().st_ino for p in same[1:]}
    changed = atomic.write_many(files)
    assert changed == sorted([same[0], *old, *(p for p in files if p.parent.name == "new")]), changed
    assert all(p.stat().st_ino == inodes[p] for p in same[1:])
    assert not same[0].is_symlink() and same[0].read_bytes() == b"f00" and elsewhere.read_bytes() == b"f00"
    assert all(p.read_bytes() == files[p] for p in files)
elif case == "worker-error":
    files[root / "f21" / ("m" * 250)] = b"x"  # in the middle: workers stage files before and after it
    assert "too long" in fails(OSError)
elif case == "interrupted":
    slow_stage = atomic._stage

    def slow(run, index):
        time.sleep(0.05)  # 80 files: 2 s of work, interrupted after 0.3 s
        return slow_stage(run, index)

    atomic._stage = slow
    signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)  # in this process only: a fork inherits no timer
    fails(KeyboardInterrupt)
elif case == "interrupted-after-staging":
    os.sync = interrupt  # every file is staged by now
    fails(KeyboardInterrupt)
assert temps() == [], temps()
print("ok")
"""


@pytest.mark.slow
@pytest.mark.parametrize("case", ["changed", "worker-error", "interrupted", "interrupted-after-staging"])
def test_many_files_staged_by_forked_workers(tmp_path, case):
    if forkpool._workers() < 2 or "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forked workers on this machine")
    done = subprocess.run([sys.executable, "-c", _FORKED, str(tmp_path), case], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
