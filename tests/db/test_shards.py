"""A sharded sweep (3 separate processes, then --merge) publishes what one sweep publishes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import git
import pytest

from harness.core.jsparse import parse
from harness.db import shards
from tests.conftest import FIXTURE_SERVERS

DATE = "2026-12-02"
VOLATILE = ("measuredAt", "attempts", "deadlineMs")


def _repo(root: Path) -> None:
    lines = ["reference: s0", "servers:"]
    for i in range(7):
        lines += [f"- name: s{i}", f"  command: python3 {FIXTURE_SERVERS / 'well_behaved.py'} --tools {i + 1}",
                  "  timeoutSeconds: 10"]
    root.mkdir()
    (root / "servers.yaml").write_text("\n".join(lines) + "\n")
    repo = git.Repo.init(root)
    repo.index.add(["servers.yaml"])
    repo.index.commit("catalog", author=git.Actor("t", "t@t"), committer=git.Actor("t", "t@t"))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", "sweep", "--isolation", "host", *args],
                          capture_output=True, text=True, timeout=300)


def _published(root: Path) -> dict:
    out = {}
    for path in sorted((root / "results").glob("*/measurement.json")):
        rec = parse(path.read_text())
        out[path.parent.name] = {k: v for k, v in rec.items() if k not in VOLATILE}
    badges = {p.name: p.read_text() for p in sorted((root / "badges").glob("*.json"))}
    return {"records": out, "badges": badges, "history": (root / "history.csv").read_text()}


@pytest.mark.slow
def test_three_shards_equal_one_sweep(tmp_path):
    single, sharded = tmp_path / "single", tmp_path / "sharded"
    _repo(single)
    _repo(sharded)
    assert _cli("--root", str(single), "--all", "--date", DATE, "--commit").returncode == 0

    procs = [subprocess.Popen([sys.executable, "-m", "harness.cli", "sweep", "--isolation", "host", "--root",
                               str(sharded), "--all", "--date", DATE, "--shard", f"{k}/3", "--out",
                               str(tmp_path / f"part{k}")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for k in (1, 2, 3)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    assert not (sharded / "results").exists()  # a shard publishes nothing
    merged = _cli("--root", str(sharded), "--merge", *(str(tmp_path / f"part{k}") for k in (1, 2, 3)), "--commit")
    assert merged.returncode == 0, merged.stderr

    assert _published(sharded) == _published(single)
    assert len(_published(single)["records"]) == 7
    assert git.Repo(sharded).head.commit.message.startswith(f"sweep {DATE}: 7 server(s)")


def test_parts_are_disjoint_and_cover_everything():
    class E:
        def __init__(self, name):
            self.name = name

    entries = [E(f"n{i:02d}") for i in range(10)]
    parts = [shards.part(entries, k, 3) for k in (1, 2, 3)]
    names = sorted(e.name for p in parts for e in p)
    assert names == sorted(e.name for e in entries)
    assert sorted(len(p) for p in parts) == [3, 3, 4]


def test_bad_shard_spec_and_mixed_dates(tmp_path):
    with pytest.raises(shards.ShardError):
        shards.parse_spec("4/3")
    for k, day in ((1, "2026-12-01"), (2, "2026-12-02")):
        shards.write_manifest(tmp_path / f"p{k}", day, k, 2, [])
    with pytest.raises(shards.ShardError, match="different dates"):
        shards.read_shards([tmp_path / "p1", tmp_path / "p2"])
