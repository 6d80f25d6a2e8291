"""``regen --backfill`` over a hostile history (harness/pages/backfill.py).

Every past version of ``results/<name>/measurement.json`` is input someone else wrote. A version
that is no record — a symlink or a submodule committed at the path, a blob larger than a record may
be, bytes that are not UTF-8, JSON nested past the canonical bound, another server's record, a
capture that does not re-derive, no usable date — is skipped by name; the vectors are those the
good versions alone imply, whatever the commit dates and time zones say, and two runs are
identical. The working tree's inputs (record, tool vectors) that are no regular file are a named
error, never a blocked read.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from harness.cli import main
from harness.pages import backfill as bf
from harness.pages import tool_vectors as tv
from tests.pages import builders as b

A = [b.tool("alpha", "Search."), b.tool("beta", "Fetch one.")]
B = [*A, b.tool("gamma", "Create a thing.")]
CATALOG = [b.entry("srv")]


def rec(tools, day):
    return b.measured("srv", tools, measuredAt=f"{day}T12:00:00.000Z")


def git(root, *args, env=None, data: bytes | None = None) -> str:
    full = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", **(env or {})}
    return subprocess.run(["git", *args], cwd=root, env=full, input=data, capture_output=True, check=True).stdout.decode()


RECORD = "results/srv/measurement.json"

# (label, how the version is committed, commit date): the commit dates go backwards and sit in odd
# time zones on purpose — the vectors' dates come from each record's measuredAt, never from git.
HOSTILE = [
    ("symlink", ("link", "/etc/passwd"), "2030-01-01T00:00:00+14:00"),
    ("submodule at an existing commit", ("gitlink", "HEAD"), "1999-12-31T23:59:59-12:00"),
    ("submodule at a missing commit", ("gitlink", "12" * 20), "2026-11-05T10:00:00+05:45"),
    ("oversized", ("bytes", json.dumps(rec(B, "2026-11-06")).encode() + b" " * 60_000), "2026-11-06T00:00:00Z"),
    ("not UTF-8", ("bytes", b'{"server": "srv", "x": "\xff\xfe"}'), "2026-11-07T00:00:00Z"),
    ("too deep", ("bytes", b"[" * 5000 + b"]" * 5000), "2026-11-08T00:00:00Z"),
    ("another server's record", ("json", b.measured("other", B, measuredAt="2026-11-09T00:00:00.000Z")), "2026-11-09T00:00:00Z"),
    ("capture that does not re-derive", ("json", {**rec(B, "2026-11-10"), "totalTokens": 1}), "2026-11-10T00:00:00Z"),
    ("no usable date", ("json", {**rec(B, "2026-11-11"), "measuredAt": ["2026-11-11"]}), "2026-11-11T00:00:00Z"),
    ("not JSON", ("bytes", b"\x1b[31m::error::hi"), "2026-11-12T00:00:00Z"),
]


def _commit_version(root, how, date: str, message: str) -> None:
    kind, value = how
    path = root / RECORD
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    if path.is_symlink() or path.exists():
        git(root, "rm", "-q", "--cached", "--ignore-unmatch", RECORD)
        path.unlink(missing_ok=True)
    if kind == "gitlink":
        sha = git(root, "rev-parse", "HEAD").strip() if value == "HEAD" else value
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},{RECORD}")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "link":
            path.symlink_to(value)
        else:
            path.write_bytes(value if kind == "bytes" else json.dumps(value).encode())
        git(root, "add", "-A", "results")
    git(root, "commit", "-q", "--allow-empty", "-m", message, env=env)


def _repo(tmp_path, hostile: bool):
    root = tmp_path / ("hostile" if hostile else "clean")
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    b.write_catalog(root, CATALOG)
    git(root, "add", "servers.yaml")
    git(root, "commit", "-q", "-m", "catalog")
    _commit_version(root, ("json", rec(A, "2026-11-02")), "2026-11-02T09:00:00-07:00", "A")
    for label, how, date in HOSTILE if hostile else ():
        _commit_version(root, how, date, label)
    _commit_version(root, ("json", rec(B, "2026-11-16")), "2026-11-16T23:30:00+13:00", "B")
    return root


@pytest.fixture
def small_records(monkeypatch):
    monkeypatch.setattr(bf, "MAX_RECORD_BYTES", 50_000)  # the oversized version is 60 kB past it


def test_hostile_versions_are_skipped_by_name_and_change_nothing(tmp_path, small_records):
    clean = bf.backfill(_repo(tmp_path, hostile=False), ["srv"])
    hostile_root = _repo(tmp_path, hostile=True)
    got = bf.backfill(hostile_root, ["srv"])
    assert [v.line for v in got.vectors["srv"].vectors] == [v.line for v in clean.vectors["srv"].vectors]
    assert [v["date"] for v in got.vectors["srv"].vectors] == ["2026-11-02", "2026-11-16"]
    assert got.vectors["srv"].text() == clean.vectors["srv"].text()
    assert len(got.skipped) == len(HOSTILE), got.skipped
    log = git(hostile_root, "log", "--reverse", "--format=%H %s").splitlines()
    by_label = {line.split(" ", 1)[1]: line[:12] for line in log}
    reasons = {"symlink": "a symbolic link", "submodule at an existing commit": "a submodule",
               "submodule at a missing commit": "a submodule", "oversized": "larger than a record may be",
               "not UTF-8": "not readable as a record", "too deep": "nesting deeper",
               "another server's record": "not the record of 'srv'", "capture that does not re-derive": "re-derives",
               "no usable date": "has no YYYY-MM-DD date", "not JSON": "not readable as a record"}
    for (label, _, _), line in zip(HOSTILE, got.skipped):
        assert line.startswith(f"{RECORD} at {by_label[label]}: ") and reasons[label] in line, (label, line)
    again = bf.backfill(hostile_root, ["srv"])
    assert again.skipped == got.skipped and again.vectors["srv"].text() == got.vectors["srv"].text()


def test_regen_backfill_over_a_hostile_history_is_one_clean_run_twice(tmp_path, small_records, capsys):
    root = _repo(tmp_path, hostile=True)
    (root / RECORD).write_text(json.dumps(rec(B, "2026-11-16")), encoding="utf-8")
    outputs = []
    for _ in range(2):
        assert main(["regen", "--root", str(root), "--backfill"]) == 0
        out, err = capsys.readouterr()
        assert "Traceback" not in err and f"{len(HOSTILE)} skipped" in out
        assert "\x1b" not in out + err and "\n::error" not in out + err  # a version's bytes never reach the log raw
        outputs.append({p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*"))
                        if p.is_file() and ".git" not in p.parts})
    assert outputs[0] == outputs[1]
    assert tv.read(root / "results/srv/tool-vectors.json", "srv").newest["toolCount"] == 3


@pytest.mark.timeout(60)
@pytest.mark.parametrize("which", ["results/srv/measurement.json", "results/srv/tool-vectors.json"])
@pytest.mark.parametrize("kind", ["a FIFO", "a character device", "a directory"])
def test_a_working_tree_input_that_is_no_regular_file_is_a_named_error(tmp_path, capsys, which, kind):
    root = tmp_path / "db"
    root.mkdir()
    b.write_catalog(root, CATALOG)
    if which.endswith("tool-vectors.json"):
        b.write_record(root, rec(A, "2026-11-02"))
    path = root / which
    path.parent.mkdir(parents=True, exist_ok=True)
    {"a FIFO": lambda: os.mkfifo(path), "a character device": lambda: path.symlink_to("/dev/zero"),
     "a directory": lambda: path.mkdir()}[kind]()
    assert main(["regen", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    if kind == "a character device":  # planted as a link to /dev/zero: refused before it is opened
        assert f"{path}: cannot read: {which} is a symbolic link; a database reader never reads through one" in err, err
    else:
        assert f"{path}: cannot read: not a regular file ({kind})" in err, err
    assert not (root / "results" / "leaderboard.md").exists()  # nothing written


# A database kept in a subdirectory of a larger repository: its path inside the repository is part
# of every record path git prints. Non-ASCII was printed quoted (matching nothing: the backfill
# silently read no version and regen replaced the vectors with the current record alone); glob
# characters matched the wrong folders. ``decoy`` is a sibling an unescaped glob would pick up.
@pytest.mark.parametrize("folder, decoy", [("données", None), ("日本語 db", None), ("a[1]*", "a1zz"),
                                           ("what?", "whatX"), ("x]y", None)])
def test_a_database_in_any_subfolder_reads_its_own_history(tmp_path, folder, decoy):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for sub, tools in ((folder, A), (decoy, B)):
        if sub is not None:
            record = root / sub / RECORD
            record.parent.mkdir(parents=True)
            record.write_text(json.dumps(rec(tools, "2026-11-02")), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "records")
    (root / folder / RECORD).write_text(json.dumps(rec(B, "2026-11-09")), encoding="utf-8")
    git(root, "commit", "-q", "-am", "B")
    got = bf.backfill(root / folder, ["srv"])
    assert (got.versions, got.skipped) == (2, [])
    assert [(v["date"], v["toolCount"]) for v in got.vectors["srv"].vectors] == [("2026-11-02", 2), ("2026-11-09", 3)]


@pytest.mark.parametrize("folder", ['say "db"', "back\\slash", "tab\there", "bell\x07"])
def test_a_subfolder_git_always_quotes_is_refused_by_name_not_read_as_empty(tmp_path, capsys, folder):
    root = tmp_path / "repo"
    (root / folder).mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    b.write_catalog(root / folder, CATALOG)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "catalog")
    with pytest.raises(bf.BackfillError, match="which git prints quoted"):
        bf.backfill(root / folder, ["srv"])
    assert main(["regen", "--root", str(root / folder), "--backfill"]) == 2
    err = capsys.readouterr().err
    assert "which git prints quoted" in err and "\t" not in err and "\x07" not in err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("which", ["results/divergence.json", "results/cross-check.json", "results/capability-probe.json",
                                   "history.csv"])
@pytest.mark.parametrize("kind", ["a FIFO", "a character device"])
def test_a_readings_file_or_the_history_that_is_no_regular_file_is_a_named_error(tmp_path, capsys, which, kind):
    root = tmp_path / "db"
    root.mkdir()
    b.write_catalog(root, CATALOG)
    b.write_record(root, rec(A, "2026-11-02"))
    path = root / which
    {"a FIFO": lambda: os.mkfifo(path), "a character device": lambda: path.symlink_to("/dev/zero")}[kind]()
    assert main(["regen", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    named = path.name if which == "history.csv" else path  # history.csv's errors name the file alone
    if kind == "a character device":  # planted as a link to /dev/zero: refused before it is opened
        assert f"{named}: cannot read: {which} is a symbolic link; a database reader never reads through one" in err, err
    else:
        assert f"{named}: cannot read: not a regular file ({kind})" in err, err
