"""A sharded sweep (3 separate processes, then --merge) publishes what one sweep publishes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import git
import pytest

from harness.cli import main
from harness.core.jsparse import parse
from harness.db import shards
from tests.conftest import FIXTURE_SERVERS

DATE = "2026-11-25"
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
    for k, day in ((1, "2026-11-24"), (2, "2026-11-25")):
        shards.write_manifest(tmp_path / f"p{k}", day, k, 2, [])
    with pytest.raises(shards.ShardError, match="different dates"):
        shards.read_shards([tmp_path / "p1", tmp_path / "p2"])


# --------------------------------------------------------------------------------------------
# Shard directories are checked against themselves and the catalog before anything is published
#: a record of one server filed under another's name never overwrites the other's.


@pytest.fixture(scope="module")
def shard_template(tmp_path_factory):
    """A repository with a committed sweep of s0..s2, and one shard directory (1/1) of the same
    catalog measured on DATE."""
    base = tmp_path_factory.mktemp("shards")
    root = base / "repo"
    _repo(root)
    common = ["--isolation", "host", "--root", str(root), "--only", "s0,s1,s2"]
    assert main(["sweep", *common, "--date", "2026-11-25", "--commit"]) == 0
    assert main(["sweep", *common, "--date", DATE, "--shard", "1/1", "--out", str(base / "part")]) == 0
    return root, base / "part"


def _swap(part: Path) -> str:
    """s1's directory now holds s2's record (the manifest still says s1)."""
    shutil.copy(part / "results/s2/measurement.json", part / "results/s1/measurement.json")
    return "the manifest lists 's1' but the record is for 's2'"


def _unlisted(part: Path) -> str:
    shutil.copytree(part / "results/s2", part / "results/s9")
    return "not listed in shard.json: s9"


def _other_day(part: Path) -> str:
    path = part / "results/s1/measurement.json"
    path.write_text(path.read_text().replace(f'"measuredAt": "{DATE}', '"measuredAt": "2026-11-01', 1))
    return "is not on the manifest's date"


def _traversal(part: Path) -> str:
    manifest = json.loads((part / shards.MANIFEST).read_text())
    manifest["servers"].append("../../repo/results/s0")
    (part / shards.MANIFEST).write_text(json.dumps(manifest))
    return 'field "servers" item #4: '  # main's names.RESULT_RULE message


def _not_in_catalog(part: Path) -> str:
    rec = json.loads((part / "results/s2/measurement.json").read_text())
    (part / "results/ghost").mkdir()
    (part / "results/ghost/measurement.json").write_text(json.dumps({**rec, "server": "ghost"}))
    manifest = json.loads((part / shards.MANIFEST).read_text())
    (part / shards.MANIFEST).write_text(json.dumps({**manifest, "servers": [*manifest["servers"], "ghost"]}))
    return "shard record 'ghost': no catalog entry of that name"


def _other_launch(part: Path) -> str:
    path = part / "results/s1/measurement.json"
    rec = json.loads(path.read_text())
    path.write_text(json.dumps({**rec, "launchCommand": "npx -y something-else"}))
    return "shard record 's1': launched 'npx -y something-else', but the catalog entry says"


def _forge(field: str, value):
    def tamper(part: Path) -> str:
        path = part / "results/s1/measurement.json"
        rec = json.loads(path.read_text())
        path.write_text(json.dumps({**rec, field: value}, indent=2))
        return f"{path}: refused: {field} is {value!r} but rawToolsCapture re-derives"
    tamper.__name__ = f"forged_{field}"
    return tamper


def _linked(part: Path) -> str:
    """s1's record is a symbolic link to a copy of itself outside the shard."""
    path = part / "results/s1/measurement.json"
    outside = part.parent / "elsewhere.json"
    shutil.copy(path, outside)
    path.unlink()
    path.symlink_to(outside)
    return "results/s1/measurement.json is a symbolic link; a database reader never reads through one"


FORGERIES = [_forge("totalTokens", 987654), _forge("toolCount", 7), _forge("canonicalLength", 12),
             _forge("canonicalSha256", "0" * 64)]


@pytest.mark.slow
@pytest.mark.parametrize("tamper", [_swap, _unlisted, _other_day, _traversal, _not_in_catalog, _other_launch,
                                    *FORGERIES, _linked])
def test_a_shard_that_does_not_match_its_records_is_refused(shard_template, tmp_path, tamper, capsys):
    template, part_template = shard_template
    root, part = tmp_path / "repo", tmp_path / "part"
    git.Repo.clone_from(template, root)
    shutil.copytree(part_template, part)
    says = tamper(part)
    before = {p: p.read_bytes() for p in sorted((root / "results").rglob("*")) if p.is_file()}
    head = git.Repo(root).head.commit.hexsha

    code = main(["sweep", "--root", str(root), "--merge", str(part), "--commit"])

    err = capsys.readouterr().err
    assert code == 2 and says in err and "nothing published" in err, err
    assert {p: p.read_bytes() for p in sorted((root / "results").rglob("*")) if p.is_file()} == before
    assert git.Repo(root).head.commit.hexsha == head and not git.Repo(root).is_dirty(untracked_files=True)


def test_two_copies_of_one_part_or_parts_of_different_splits_are_refused(tmp_path):
    for name, spec in (("a", "1/2"), ("b", "1/2"), ("c", "2/3")):
        shards.write_manifest(tmp_path / name, DATE, *map(int, spec.split("/")), [])
    with pytest.raises(shards.ShardError, match="is also"):
        shards.read_shards([tmp_path / "a", tmp_path / "b"])
    with pytest.raises(shards.ShardError, match="does not split the slice like the others"):
        shards.read_shards([tmp_path / "a", tmp_path / "c"])


# --------------------------------------------------------------------------------------------
# The matrix is sized from the slice: every shard fits its job, at most GitHub's 256 jobs.


class _Named:
    def __init__(self, name: str, command: str | None = None, url: str | None = None):
        self.name, self.command, self.url = name, command, url


@pytest.mark.parametrize("servers", [0, 1, 45, 46, 47, 92, 93, 1000, 5000, 11776])
def test_count_keeps_every_shard_within_its_job(servers):
    n = shards.count(servers)
    assert 1 <= n <= shards.MAX_SHARDS
    assert -(-servers // n) <= shards.per_shard()  # the largest round-robin part fits
    assert n == 1 or -(-servers // (n - 1)) > shards.per_shard()  # and no fewer shards would do


def test_per_shard_comes_from_the_figures_and_count_saturates_at_the_matrix_limit():
    room = shards.JOB_SECONDS - shards.SETUP_SECONDS - shards.LONGEST_SECONDS
    assert shards.per_shard() * shards.SERVER_SECONDS <= room < (shards.per_shard() + 1) * shards.SERVER_SECONDS
    assert shards.capacity() == shards.MAX_SHARDS * shards.per_shard() >= 5000
    assert shards.count(shards.capacity() + 1) == shards.MAX_SHARDS


def test_plan_rows_cover_the_slice_and_their_digest_follows_names_and_launches():
    entries = [_Named(f"n{i:03d}", f"npx -y p{i}@1.0.0") for i in range(120)] + [_Named("remote", url="https://x/mcp")]
    rows = shards.plan(entries)
    assert [r["shard"] for r in rows] == [1, 2, 3]
    assert [r["servers"] for r in rows] == [len(shards.part(entries, k, 3)) for k in (1, 2, 3)]
    assert shards.plan(list(reversed(entries))) == rows  # order of the catalog does not matter
    bumped = [_Named(e.name, e.command.replace("p5@1.0.0", "p5@1.0.1") if e.command else None, e.url)
              for e in entries]
    holder = next(k for k in (1, 2, 3) if entries[5] in shards.part(entries, k, 3))
    changed = [a["shard"] for a, b in zip(rows, shards.plan(bumped)) if a["packages"] != b["packages"]]
    assert changed == [holder]  # a new pin is a new cache for that shard alone
    renamed = [_Named("zz" if e.name == "remote" else e.name, e.command, e.url) for e in entries]
    assert [a["packages"] == b["packages"] for a, b in zip(rows, shards.plan(renamed))] == [False, True, True]
