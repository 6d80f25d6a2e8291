"""The regen cache's pack files (harness/pages/cache_shards.Pack): entries read back as written; a warm run
rewrites nothing, a change rewrites only its shard; entries the run did not ask about are dropped when it
writes; a shard damaged anywhere yields the entries before the damage and never an altered one."""

from __future__ import annotations

import hashlib
import os
import random

import pytest

from harness.pages import cache_shards
from harness.pages.cache_shards import Pack, parse_shard, shard_bytes


def keys(n: int, salt: str = "") -> list[str]:
    return [hashlib.sha256(f"{salt}{i}".encode()).hexdigest() for i in range(n)]


def filled(where, n: int = 40, salt: str = "") -> dict[str, bytes]:
    entries = {key: f"entry {key}\n".encode() * (1 + i % 5) for i, key in enumerate(keys(n, salt))}
    pack = Pack(where)
    for key, data in entries.items():
        pack.put(key, data)
    pack.save()
    return entries


def identities(where) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in where.iterdir()}


def test_entries_read_back_as_written_from_few_files(tmp_path):
    entries = filled(tmp_path / "kind", 200)
    pack = Pack(tmp_path / "kind")
    assert {key: pack.get(key, 1 << 20) for key in entries} == entries
    assert 1 < len(list((tmp_path / "kind").iterdir())) <= cache_shards.SHARDS


def test_a_run_that_changes_nothing_writes_nothing(tmp_path):
    entries = filled(tmp_path / "kind")
    before = identities(tmp_path / "kind")
    pack = Pack(tmp_path / "kind")
    for key in entries:
        pack.get(key, 1 << 20)
    pack.save()
    untouched = Pack(tmp_path / "kind")  # neither read nor added to
    untouched.save()
    assert identities(tmp_path / "kind") == before


def test_one_new_entry_rewrites_its_shard_only(tmp_path):
    entries = filled(tmp_path / "kind", 100)
    before = identities(tmp_path / "kind")
    pack = Pack(tmp_path / "kind")
    for key in entries:
        pack.get(key, 1 << 20)
    new = keys(1, "new")[0]
    pack.put(new, b"new")
    pack.save()
    after = identities(tmp_path / "kind")
    assert {name for name in after if after[name] != before.get(name)} == {Pack.shard(new)}
    assert Pack(tmp_path / "kind").get(new, 10) == b"new"


def test_entries_not_asked_about_are_dropped_when_the_run_writes(tmp_path):
    entries = filled(tmp_path / "kind", 60)
    kept = list(entries)[:30]
    pack = Pack(tmp_path / "kind")
    for key in kept:
        pack.get(key, 1 << 20)
    pack.put(keys(1, "new")[0], b"new")
    pack.save()
    fresh = Pack(tmp_path / "kind")
    assert [key for key in entries if fresh.get(key, 1 << 20) is not None] == kept


def test_files_kept_one_per_entry_by_other_code_are_removed(tmp_path):
    where = tmp_path / "kind"
    where.mkdir()
    for key in keys(5, "old"):
        (where / key).write_bytes(b"passed\n")
    (where / ".pack-3.999.tmp").write_bytes(b"another run's")
    filled(where, 5)
    assert sorted(p.name for p in where.iterdir() if not p.name.startswith(("pack-", ".")))  == []
    assert (where / ".pack-3.999.tmp").exists()


def test_an_entry_over_the_bound_is_a_miss_and_a_shard_over_its_bound_is_empty(tmp_path, monkeypatch):
    entries = filled(tmp_path / "kind", 20)
    key, data = next(iter(entries.items()))
    assert Pack(tmp_path / "kind").get(key, len(data) - 1) is None
    assert Pack(tmp_path / "kind").get(key, len(data)) == data
    monkeypatch.setattr(cache_shards, "MAX_PACK", (tmp_path / "kind" / Pack.shard(key)).stat().st_size - 1)
    assert Pack(tmp_path / "kind").get(key, len(data)) is None


@pytest.mark.parametrize("seed", range(6))
def test_a_damaged_shard_gives_whole_entries_before_the_damage_and_never_an_altered_one(seed):
    rnd = random.Random(seed)
    entries = {key: bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 300))) for key in keys(25, str(seed))}
    whole = shard_bytes(entries)
    order = sorted(entries)
    for _ in range(60):
        damaged = bytearray(whole)
        at = rnd.randrange(len(damaged))
        how = rnd.choice(["flip", "cut", "insert", "delete"])
        if how == "flip":
            damaged[at] ^= 1 << rnd.randrange(8)
        elif how == "cut":
            del damaged[at:]
        elif how == "insert":
            damaged[at:at] = bytes([rnd.randrange(256)])
        else:
            del damaged[at]
        got = parse_shard(bytes(damaged))
        assert list(got) == order[:len(got)]  # a prefix of the entries, in order
        assert all(got[key] == entries[key] for key in got)  # each exactly as written
        assert len(got) < len(entries) or bytes(damaged) == whole


@pytest.mark.parametrize("data", [b"", b"not a pack", cache_shards.SHARD_HEAD + b"k 5 x\nabcde",
                                  cache_shards.SHARD_HEAD + b"bad key 1 " + b"0" * 64 + b"\nx",
                                  cache_shards.SHARD_HEAD + b"k 99999999999999 " + b"0" * 64 + b"\n",
                                  cache_shards.SHARD_HEAD + b"k" * 10_000])
def test_what_is_not_a_pack_reads_as_no_entries(data):
    assert parse_shard(data) == {}


@pytest.mark.parametrize("plant", ["fifo", "link", "folder"])
def test_a_shard_that_is_not_a_regular_file_is_a_miss_and_no_hang(tmp_path, plant):
    entries = filled(tmp_path / "kind", 10)
    key = next(iter(entries))
    shard = tmp_path / "kind" / Pack.shard(key)
    data = shard.read_bytes()
    shard.unlink()
    if plant == "fifo":
        os.mkfifo(shard)
    elif plant == "link":
        (tmp_path / "elsewhere").write_bytes(data)
        shard.symlink_to(tmp_path / "elsewhere")
    else:
        shard.mkdir()
    assert Pack(tmp_path / "kind").get(key, 1 << 20) is None


@pytest.mark.parametrize("key", ["has space", "new\nline", "", "x" * 129, "é"])
def test_a_key_the_pack_cannot_hold_is_refused(tmp_path, key):
    with pytest.raises(ValueError, match="not a cache key"):
        Pack(tmp_path / "kind").put(key, b"x")


def in_shard(name: str, n: int, salt: str = "") -> list[str]:
    """``n`` keys whose entries lie in the shard file ``name``."""
    found, i = [], 0
    while len(found) < n:
        key = f"{salt}{i}"
        if Pack.shard(key) == name:
            found.append(key)
        i += 1
    return found


def test_one_pack_reads_a_bounded_number_of_bytes_over_all_its_shards(tmp_path, monkeypatch):
    # sixteen shards each near the bound of one would be held together (gigabytes at the real bounds)
    where = tmp_path / "kind"
    where.mkdir()
    for digit in range(cache_shards.SHARDS):
        name = f"pack-{digit:x}"
        (where / name).write_bytes(shard_bytes({key: b"x" * 1000 for key in in_shard(name, 4)}))
    bound = 3 * (where / "pack-0").stat().st_size
    monkeypatch.setattr(cache_shards, "MAX_PACK", bound)
    read = []
    real = cache_shards.read_entry
    monkeypatch.setattr(cache_shards, "read_entry", lambda path, limit: read.append(real(path, limit)) or read[-1])
    pack = Pack(where)
    pack.get(in_shard("pack-0", 1)[0], 1 << 20)
    pack.save()
    assert sum(len(data or b"") for data in read) <= bound


def test_one_pack_parses_a_bounded_number_of_entries_and_heals_the_shard(tmp_path, monkeypatch):
    # millions of tiny entries (or one entry repeated) would cost minutes and gigabytes at the real bounds
    where = tmp_path / "kind"
    where.mkdir()
    tiny = sorted(in_shard("pack-0", 300))  # as a shard holds them
    (where / "pack-0").write_bytes(shard_bytes(dict.fromkeys(tiny, b"")) + shard_bytes({"again": b""})[len(cache_shards.SHARD_HEAD):] * 500)
    monkeypatch.setattr(cache_shards, "MAX_ENTRIES", 100)
    pack = Pack(where)
    assert pack.get(tiny[0], 10) == b""
    assert pack.get(tiny[-1], 10) is None  # past the bound: a miss
    pack.save()
    assert parse_shard((where / "pack-0").read_bytes()) == {tiny[0]: b""}  # written again with what the run asked for


def test_a_shard_damaged_past_its_entries_is_written_again(tmp_path):
    entries = filled(tmp_path / "kind", 20)
    key = next(iter(entries))
    shard = tmp_path / "kind" / Pack.shard(key)
    whole = shard.read_bytes()
    held = parse_shard(whole)
    shard.write_bytes(whole + b"\0" * 4096)  # read again by every run while it stays
    pack = Pack(tmp_path / "kind")
    assert all(pack.get(k, 1 << 20) == data for k, data in entries.items())
    pack.save()
    assert shard.read_bytes() == shard_bytes(held)


def test_temporary_files_of_a_run_that_died_are_removed_and_a_writing_run_leaves_none(tmp_path, monkeypatch):
    where = tmp_path / "kind"
    where.mkdir()
    dead, old = where / ".pack-3.999.tmp", where / ".0123abcd.998.tmp"  # a killed run's, and one of a file per entry
    for path in (dead, old):
        path.write_bytes(b"half written")
        os.utime(path, (1, 1))
    filled(where, 5)
    assert not dead.exists() and not old.exists()

    def interrupted(source, target):
        raise KeyboardInterrupt
    monkeypatch.setattr(cache_shards.os, "replace", interrupted)  # the temporary file written, not yet renamed
    pack = Pack(where)
    pack.put(keys(1, "more")[0], b"more")
    with pytest.raises(KeyboardInterrupt):
        pack.save()
    monkeypatch.undo()
    assert [p.name for p in where.iterdir() if p.name.startswith(".")] == []


def test_a_folder_among_the_entries_does_not_stop_the_others_being_removed(tmp_path):
    where = tmp_path / "kind"
    where.mkdir()
    old = keys(30, "old")
    for key in old:
        (where / key).write_bytes(b"passed\n")
    (where / "planted").mkdir()
    filled(where, 5)
    assert sorted(p.name for p in where.iterdir() if not p.name.startswith("pack-")) == ["planted"]


@pytest.mark.parametrize("linked", ["kind", "repository"])
def test_a_cache_folder_reached_through_a_link_never_has_other_files_removed(tmp_path, linked):
    elsewhere = tmp_path / "elsewhere"
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / linked).symlink_to(elsewhere)
    where = elsewhere if linked == "kind" else elsewhere / "kind"
    where.mkdir(parents=True)
    (where / "notes.txt").write_bytes(b"mine")
    filled(tmp_path / "cache" / ("kind" if linked == "kind" else "repository/kind"), 5)
    assert (where / "notes.txt").read_bytes() == b"mine"


@pytest.mark.parametrize("plant", ["oversized", "fifo", "link"])
def test_a_shard_that_cannot_be_read_is_replaced_when_the_run_writes(tmp_path, monkeypatch, plant):
    # else it is opened (an oversized one read up to the bound) by every run while no new entry lands in it
    entries = filled(tmp_path / "kind", 10)
    key = next(iter(entries))
    shard = tmp_path / "kind" / Pack.shard(key)
    shard.unlink()
    if plant == "oversized":
        with open(shard, "wb") as f:
            f.truncate(4096)
        monkeypatch.setattr(cache_shards, "MAX_PACK", 1024)
    elif plant == "fifo":
        os.mkfifo(shard)
    else:
        (tmp_path / "elsewhere").write_bytes(b"not the cache's")
        shard.symlink_to(tmp_path / "elsewhere")
    pack = Pack(tmp_path / "kind")
    assert pack.get(key, 1 << 20) is None
    pack.put(next(k for k in keys(100, "other") if Pack.shard(k) != shard.name), b"other")
    pack.save()
    assert not os.path.lexists(shard)
    assert (tmp_path / "elsewhere").exists() or plant != "link"
