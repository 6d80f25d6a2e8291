"""Crash safety of a sweep: an interruption at any moment leaves
the published files old or new — never a mixture once recovered, never a truncated file — and the
next sweep recovers without manual cleanup.

(a) the staging journal, unit level: a publish killed after k of n renames, for every k;
(b) the real thing: ``python -m harness.cli sweep --commit`` killed with SIGKILL at several moments.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli.sweep_cmd import PAGES
from harness.core.jsparse import parse
from harness.db import publish
from harness.db.journal import JOURNAL, STAGING_DIR, Staging
from harness.db.sweep import same_result
from harness.probe.process import descendants
from tests.conftest import REPO
from tests.db.stop_at import Lines
from tests.db.sweeprepo import (
    BOT_IDENTITY, catalog_text, check_published, commit_catalog, fixture, git, head, head_files, init_repo,
    last_commit, porcelain, process_identity, staging_leftovers, still_running, sweep, well_behaved, working_files,
)

# --------------------------------------------------------------------------------------------
# (a) the journal

TARGETS = ["badges/a.json", "badges/b.json", "history.csv", "results/a/measurement.json",
           "results/b/measurement.json", "results/new/measurement.json"]  # the last one has no old version


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs (not an Exception, so nothing catches it)."""


def _old_tree(root: Path) -> None:
    for relative in TARGETS[:-1]:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"old {relative}\n")


def _state(root: Path) -> dict[str, str]:
    """Each target: ``old``, ``new`` or ``absent`` — anything else (truncated, mixed) fails."""
    out = {}
    for relative in TARGETS:
        path = root / relative
        if not path.exists():
            out[relative] = "absent"
            continue
        text = path.read_text()
        assert text in (f"old {relative}\n", f"new {relative}\n"), (relative, text)
        out[relative] = text.split()[0]
    return out


def _stage_new(root: Path, run: str = "2026-11-30-1234") -> Staging:
    stage = Staging(root, run)
    for relative in TARGETS:
        stage.write_text(relative, f"new {relative}\n")
    return stage


def _begin(stage: Staging):
    return stage.begin([t for t in TARGETS if t != "history.csv"], ["history.csv"], None)


def _promote_all(journal) -> None:
    """The two renaming steps of a publish (harness.db.publish.finish), in order."""
    journal.promote(journal.run_dir.parents[1], journal.files)
    journal.promote(journal.run_dir.parents[1], journal.history)


def _kill_after(monkeypatch, renames: int) -> list:
    """Make the ``renames``+1-th rename of a staged file over its target raise ``Killed``
    (the journal's own atomic writes are let through)."""
    real = os.replace
    done = []

    def replace(src, dst, *args, **kwargs):
        if Path(dst).name != JOURNAL:
            if len(done) == renames:
                raise Killed()
            done.append(dst)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return done


@pytest.mark.parametrize("k", range(len(TARGETS) + 1))
def test_publish_killed_after_k_of_n_renames_is_rolled_forward(tmp_path, monkeypatch, k):
    root = tmp_path
    _old_tree(root)
    stage = _stage_new(root)
    journal = _begin(stage)
    done = _kill_after(monkeypatch, k)

    if k < len(TARGETS):
        with pytest.raises(Killed):
            _promote_all(journal)
    else:
        _promote_all(journal)
    monkeypatch.undo()

    state = _state(root)  # every file is whole: old or new
    assert sum(v == "new" for v in state.values()) == k == len(done)
    assert (stage.dir / JOURNAL).exists()  # deleted only once the whole publish is done

    lines = publish.recover(root, PAGES)

    assert lines[0] == (f"finished interrupted publish {stage.dir.name} (stopped at: begun): {len(TARGETS) - k} "
                        "file(s) rolled forward, pages regenerated, not a committing run")
    assert all(line.startswith("  pages not regenerated: ") for line in lines[1:])  # no catalog in this tree
    assert set(_state(root).values()) == {"new"}
    assert not stage.dir.exists()
    assert publish.recover(root, PAGES) == []  # idempotent


def test_kill_while_writing_the_journal_leaves_everything_old(tmp_path):
    root = tmp_path
    _old_tree(root)
    stage = _stage_new(root)
    (stage.dir / f".{JOURNAL}.x1y2z3ab.tmp").write_text('{"files": ["badges/a.json", "badg')  # a torn temp journal

    lines = publish.recover(root, PAGES)

    assert lines == [f"discarded unpublished staging {stage.dir.name}"]
    state = _state(root)
    assert state.pop("results/new/measurement.json") == "absent"
    assert set(state.values()) == {"old"}
    assert not stage.dir.exists()


def test_staging_without_a_journal_is_discarded(tmp_path):
    root = tmp_path
    _old_tree(root)
    _stage_new(root, "run-a")
    _stage_new(root, "run-b").path("results/a/.measurement.json.abc12345.tmp").write_text("{\"half")  # torn write
    lines = publish.recover(root, PAGES)
    assert lines == ["discarded unpublished staging run-a", "discarded unpublished staging run-b"]
    assert _state(root)["results/a/measurement.json"] == "old"
    assert list((root / STAGING_DIR).iterdir()) == []


def test_two_interrupted_runs_roll_forward_in_order(tmp_path, monkeypatch):
    """An older journaled run and a newer unjournaled one: the journaled one is finished, the
    other dropped, and the result is the journaled run's files."""
    root = tmp_path
    _old_tree(root)
    first = _stage_new(root, "2026-11-29-1")
    journal = _begin(first)
    _kill_after(monkeypatch, 2)
    with pytest.raises(Killed):
        _promote_all(journal)
    monkeypatch.undo()
    second = Staging(root, "2026-11-30-2")
    second.write_text("badges/a.json", "something else\n")

    lines = [line for line in publish.recover(root, PAGES) if not line.startswith("  ")]

    assert lines[0].startswith("finished interrupted publish 2026-11-29-1")
    assert lines[1] == "discarded unpublished staging 2026-11-30-2"
    assert set(_state(root).values()) == {"new"}


def test_a_journal_of_the_first_format_is_still_finished(tmp_path):
    """A publish interrupted under the previous harness (a journal that is a bare list of paths)."""
    root = tmp_path
    _old_tree(root)
    stage = _stage_new(root)
    (stage.dir / JOURNAL).write_text(json.dumps(sorted(TARGETS)))
    lines = publish.recover(root, PAGES)
    assert lines[0].startswith(f"finished interrupted publish {stage.dir.name}")
    assert set(_state(root).values()) == {"new"} and not stage.dir.exists()


@pytest.mark.parametrize("text", ["{not json", '{"files": "results/a"}', '{"files": ["../../etc/passwd"]}', "[1, 2]"])
def test_an_unreadable_journal_is_reported_and_left_alone(tmp_path, text):
    root = tmp_path
    _old_tree(root)
    stage = _stage_new(root)
    (stage.dir / JOURNAL).write_text(text)
    lines = publish.recover(root, PAGES)
    assert len(lines) == 1 and lines[0].startswith("left for a human: ") and str(stage.dir / JOURNAL) in lines[0]
    assert set(_state(root).values()) <= {"old", "absent"} and stage.dir.exists()


# --------------------------------------------------------------------------------------------
# (b) SIGKILL a real sweep

SERVERS = 6


def _kill_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository with a committed sweep of ``SERVERS`` fixture servers (3 tools, an earlier
    date), then a committed catalog change (2 tools, slower to start): the next sweep changes every
    record, badge and history.csv. Returns (root, HEAD)."""
    names = [f"srv{i}" for i in range(SERVERS)]
    root = init_repo(tmp_path / "repo", catalog_text([(n, well_behaved(3)) for n in names]))
    earlier = dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=28)
    code, _, err = sweep(root, "--all", "--commit", "--date", earlier.isoformat())
    assert code == 0, err
    return root, commit_catalog(root, catalog_text([(n, fixture("slow_start", "--delay", "0.3")) for n in names]))


def _sweep_process(root: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "sweep", "--root", str(root), "--all", "--commit", "--concurrency", "2"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _family(pid: int) -> set[tuple[int, int]]:
    """The sweep process and every descendant, as (pid, start time) identities."""
    found = (process_identity(p) for p in descendants(pid) | {pid})
    return {identity for identity in found if identity is not None}


def _kill_group(proc: subprocess.Popen, seen: set) -> set:
    """SIGKILL the sweep's process group; returns every process of its family seen so far (the
    servers it launched live in their own sessions, so the group kill does not reach them)."""
    seen |= _family(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(10)
    return seen


def _assert_no_survivors(family: set[tuple[int, int]], timeout: float = 10.0) -> None:
    """Every process the killed sweep had started is gone (they exit on stdin EOF, or bwrap's
    --die-with-parent takes them); any that remain are killed and the test fails."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends and any(still_running(p) for p in family):
        time.sleep(0.05)
    alive = sorted(p for p in family if still_running(p))
    described = [(pid, _cmdline(pid)[:160]) for pid, _ in alive]
    for pid, _ in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not alive, f"processes left behind by the killed sweep: {described}"


def _outcome(before: str, now: str, files: dict[str, bytes], old: dict[str, bytes]) -> str:
    if now != before:
        return "killed after the commit"
    changed = sorted(p for p in files if files[p] != old.get(p))
    core = [p for p in changed if _is_core(p)]
    if not changed:
        return "killed before publishing (tree as committed)"
    return f"killed after publishing began ({len(core)} core file(s) new, {len(changed) - len(core)} regenerated)"


def _is_core(path: str) -> bool:
    """Records, badges and history.csv: what the sweep stages and promotes through the journal.
    Everything else published (leaderboard, pages, charts) is regenerated from them afterwards."""
    return path.endswith("/measurement.json") or path.startswith("badges/") or path == "history.csv"


def _regenerated(root: Path) -> dict[str, bytes]:
    """What ``harness.pages.regen`` renders from the files now on disk (empty when that layer
    is absent)."""
    try:
        from harness.pages.regen import render_all
    except ImportError:
        return {}
    return {path: text.encode("utf-8") for path, text in render_all(root).items()}


def _assert_each_file_old_or_new(files: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes],
                                 regenerated: dict[str, bytes]) -> None:
    """Every published file is whole and is either its HEAD version or its new version: for a
    record the same result as the complete reference sweep's (only the clock differs), for a
    badge or history.csv the reference bytes, for a regenerated page what regen renders from the
    records on disk."""
    assert set(files) <= set(old) | set(new), sorted(set(files) - set(old) - set(new))
    for path, data in files.items():
        if data == old.get(path):
            continue
        if path.endswith("/measurement.json"):
            assert same_result(parse(data.decode("utf-8")), parse(new[path].decode("utf-8"))), path
        elif _is_core(path):
            assert data == new[path], path
        else:
            assert data == regenerated[path], path


@pytest.fixture(scope="module")
def kill_template(tmp_path_factory):
    """The repository before the killed sweep, and the files a complete sweep publishes from it
    (built once, then copied for each kill)."""
    base = tmp_path_factory.mktemp("kill")
    root, sha = _kill_repo(base)
    old = working_files(root)
    reference = base / "reference"
    subprocess.run(["git", "clone", "-q", str(root), str(reference)], check=True)
    code, _, err = sweep(reference, "--all", "--commit")
    assert code == 0, err
    return root, sha, old, working_files(reference)


@pytest.mark.slow
@pytest.mark.parametrize("moment", [
    "0.2s", "0.5s", "1s", "2s",            # starting up, measuring
    "line:[1/", "line:[4/",                # records staged, journal not yet written
    "line:harness-fault check",            # checked, staging badges/history, promoting
    "line:published",                      # promoted and regenerated, not committed
    "line:committed",                      # committed, staging directory not yet removed
])
def test_sigkill_at_any_moment_leaves_old_or_new_and_the_next_sweep_recovers(kill_template, tmp_path, moment):
    template, before, old, new = kill_template
    root = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(template), str(root)], check=True)
    git(root, "config", "user.name", "Test Human")
    git(root, "config", "user.email", "human@example.com")
    assert head(root) == before and working_files(root) == old

    proc = _sweep_process(root)
    lines = Lines(proc)
    seen: set[tuple[int, int]] = set()
    try:
        if moment.startswith("line:"):
            text, _, extra = moment[5:].partition("+")
            ends = time.monotonic() + 60
            while not lines.wait_for(text, timeout=0.02) and time.monotonic() < ends and proc.poll() is None:
                seen |= _family(proc.pid)
            if extra:
                time.sleep(float(extra.rstrip("s")))
        else:
            ends = time.monotonic() + float(moment.rstrip("s"))
            while time.monotonic() < ends and proc.poll() is None:
                seen |= _family(proc.pid)
                time.sleep(0.02)
    finally:
        seen = _kill_group(proc, seen)
        _assert_no_survivors(seen)

    # Right after the kill: HEAD is the old commit or one complete new commit; every file whole.
    now = head(root)
    after_kill = working_files(root)
    check_published(after_kill)
    if now != before:  # killed after the commit: it is complete, and the tree is exactly it
        assert git(root, "rev-parse", "HEAD~1").strip() == before
        assert last_commit(root)["author"] == BOT_IDENTITY
        assert head_files(root) == after_kill and set(after_kill) == set(new)
        _assert_each_file_old_or_new(after_kill, {}, new, _regenerated(root))
    _assert_each_file_old_or_new(after_kill, old, new, _regenerated(root))

    # A normal sweep recovers with no manual cleanup and commits cleanly.
    code, _, err = sweep(root, "--all", "--commit")
    print(f"\nKILL {moment}: {_outcome(before, now, after_kill, old)}; {len(seen)} process(es) of the sweep, none left; recovery: "
          f"{[l for l in err.splitlines() if 'interrupted' in l or 'staging' in l or 'commit' in l]}")
    assert code == 0, err
    assert "harness fault" not in err
    assert git(root, "rev-parse", "HEAD~1").strip() == before  # exactly one sweep commit on top
    assert last_commit(root)["author"] == BOT_IDENTITY
    assert porcelain(root) == "" and staging_leftovers(root) == []
    final = working_files(root)
    assert final == head_files(root)
    check_published(final)
    assert set(final) == set(new)
    _assert_each_file_old_or_new(final, {}, new, _regenerated(root))
    assert final["history.csv"] == new["history.csv"]


@pytest.mark.parametrize("lock", ["index.lock", "refs/heads/main.lock", "logs/refs/heads/main.lock", "logs/HEAD.lock"])
def test_a_stale_git_lock_does_not_stop_the_next_commit(tmp_path, lock):
    """What a sweep killed inside ``git add`` (the index lock) or inside gitpython's commit (the
    branch's ref lock, a reflog lock) leaves behind: the next sweep still commits."""
    root = init_repo(tmp_path / "repo", catalog_text([("one", well_behaved(2))]))
    path = root / ".git" / lock
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    code, _, err = sweep(root, "--all", "--commit")
    assert code == 0, err
    assert last_commit(root)["author"] == BOT_IDENTITY and porcelain(root) == ""
    assert not path.exists()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sandbox", "host"])
def test_sigkill_leaves_no_server_behind_even_one_that_ignores_eof_and_sigterm(tmp_path, mode):
    """A launched server lives in its own session, so the group kill does not reach it; what ends
    it is bubblewrap's --die-with-parent (sandbox) or the PR_SET_PDEATHSIG set in the child (host)."""
    root = init_repo(tmp_path / "repo", catalog_text(
        [("hang", fixture("never_answers", "--ignore-eof", "--ignore-sigterm"))]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "sweep", "--root", str(root), "--all", "--isolation", mode],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    seen: set[tuple[int, int]] = set()

    def server_up() -> bool:  # the server itself, not the bwrap that will exec it
        return any(_cmdline(pid).split(" ")[0].endswith("python3") and "never_answers" in _cmdline(pid)
                   for pid, start in seen if still_running((pid, start)))

    try:
        ends = time.monotonic() + 30
        while time.monotonic() < ends and proc.poll() is None and not server_up():
            seen |= _family(proc.pid)
            time.sleep(0.05)
        assert server_up(), "the server never started"
    finally:
        seen = _kill_group(proc, seen)
        _assert_no_survivors(seen, timeout=3.0)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
