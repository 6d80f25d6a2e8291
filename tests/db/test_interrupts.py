"""Interrupted publishes: SIGINT and SIGKILL at each publish step — measuring,
promoting, history, regen (and inside it, with temporary pages half written), commit, and after the
commit — leave a repository that the next sweep completes: no lost history row, no stray file, no
record without its history row, exactly one commit for the interrupted sweep. And two sweeps never
interleave: the second exits 2 naming the holder, or waits for it with ``--wait``.

How a step is reached: a real ``python -m tests.db.stop_at STEP RELEASE sweep …`` process pauses
right after its journal records STEP (see ``tests/db/stop_at.py``); the test then signals that
process. "measuring" needs no wrapper: the sweep is signalled once one server's record is staged
while a slow server is still being measured.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.core.jsparse import parse
from harness.db.sweep import same_result
from tests.conftest import REPO
from tests.db.stop_at import Stopped, interruptible, journal_of
from tests.db.sweeprepo import (
    BOT_IDENTITY, catalog_text, check_published, commit_catalog, fixture, git, head, history_rows, init_repo,
    last_commit, porcelain, records, staging_leftovers, sweep, well_behaved, working_files,
)

D0, D1 = "2026-11-02", "2026-11-09"
COMMON = ("--all", "--isolation", "host", "--concurrency", "3")
STEPS = ("promoting", "history", "regen", "regen-writing", "commit", "done")


def _template(tmp_path_factory) -> tuple[Path, str, dict]:
    """A repository with a committed sweep on D0 of three fixture servers, then a committed catalog
    change that changes two records; returns (root, HEAD, the D0 history rows)."""
    base = tmp_path_factory.mktemp("interrupts")
    root = init_repo(base / "repo", catalog_text([("alpha", well_behaved(2)), ("bravo", well_behaved(3)),
                                                  ("charlie", well_behaved(4))]))
    code, _, err = sweep(root, *COMMON, "--commit", "--date", D0)
    assert code == 0, err
    sha = commit_catalog(root, catalog_text([("alpha", well_behaved(5)), ("bravo", well_behaved(3)),
                                             ("charlie", well_behaved(6))]))
    return root, sha, history_rows(root)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root, sha, rows = _template(tmp_path_factory)
    reference = root.parent / "reference"
    subprocess.run(["git", "clone", "-q", str(root), str(reference)], check=True)
    code, _, err = sweep(reference, *COMMON, "--commit", "--date", D1)
    assert code == 0, err
    return root, sha, rows, working_files(reference)


def _clone(template_root: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(template_root), str(root)], check=True)
    git(root, "config", "user.name", "Test Human")
    git(root, "config", "user.email", "human@example.com")
    return root


def _temp_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp") if ".git" not in p.parts)


def _assert_completed(root: Path, before: str, old_rows: list[dict], reference: dict) -> None:
    """The repository after the recovering sweep: one commit on top of ``before`` (the interrupted
    sweep's, by the bot), nothing stray, every history row kept, every record with its row."""
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert last_commit(root)["author"] == BOT_IDENTITY
    assert last_commit(root)["message"].startswith(f"sweep {D1}: 3 server(s)")
    assert porcelain(root) == "" and staging_leftovers(root) == [] and _temp_files(root) == []
    rows = history_rows(root)
    assert all(row in rows for row in old_rows)  # no lost history row
    assert sorted((r["date"], r["server"]) for r in rows) == sorted(
        [(D0, s) for s in ("alpha", "bravo", "charlie")] + [(D1, s) for s in ("alpha", "bravo", "charlie")])
    for server, rec in records(root).items():  # no record without its history row
        row = next(r for r in rows if r["server"] == server and r["date"] == rec["measuredAt"][:10])
        assert (row["status"], row["tokens"]) == (rec["status"], int(rec["totalTokens"]))
    files = working_files(root)
    check_published(files)
    assert set(files) == set(reference)
    for path, data in files.items():  # byte for byte what an uninterrupted sweep publishes
        if path.endswith("/measurement.json"):
            assert same_result(parse(data.decode()), parse(reference[path].decode())), path
        else:
            assert data == reference[path], path


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
@pytest.mark.parametrize("step", STEPS)
def test_an_interrupted_publish_is_finished_by_the_next_sweep(template, tmp_path, step, sig):
    template_root, before, old_rows, reference = template
    root = _clone(template_root, tmp_path)

    with Stopped(step, "-", root, *COMMON, "--commit", "--date", D1) as run:
        if step == "regen-writing":
            assert any(p.startswith("docs/") for p in _temp_files(root)), "no temporary page was written"
            journal = next(root.glob(".staging/*/JOURNAL"))
        else:
            journal = Path(run.stopped_at)
        code = run.signal(sig)
    assert code != 0
    assert journal.exists() and journal_of(str(journal))["step"] == ("regen" if step == "regen-writing" else step)
    committed_already = head(root) != before
    assert committed_already == (step == "done")

    code, _, err = sweep(root, *COMMON, "--commit", "--date", D1)

    assert code == 0, err
    assert "finished interrupted publish" in err, err  # and its own sweep found nothing new: one commit in all
    _assert_completed(root, before, old_rows, reference)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_an_interrupt_while_measuring_publishes_nothing_and_the_next_sweep_does_it_all(tmp_path_factory, tmp_path, sig):
    template_root, before, old_rows = _template(tmp_path_factory)
    root = _clone(template_root, tmp_path)
    gate = tmp_path / "gate"  # charlie answers only once it exists
    slow = catalog_text([("alpha", well_behaved(5)), ("bravo", well_behaved(3)),
                         ("charlie", fixture("launch_script", "--state", str(tmp_path / "n"), "--script", "ok",
                                             "--tools", "6", "--gate", str(gate)))])
    before = commit_catalog(root, slow, "charlie waits for a gate")
    tree = working_files(root)
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "sweep", "--root", str(root), *COMMON, "--commit",
                             "--date", D1], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=interruptible)
    try:
        ends = time.monotonic() + 60
        while not list(root.glob(".staging/*/results/alpha/measurement.json")) and time.monotonic() < ends:
            time.sleep(0.02)
        assert list(root.glob(".staging/*/results/alpha/measurement.json")), "alpha was never staged"
        assert not list(root.glob(".staging/*/JOURNAL"))  # still measuring: charlie waits for its gate
        (os.killpg if sig == signal.SIGKILL else os.kill)(proc.pid, sig)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert working_files(root) == tree and head(root) == before  # nothing published
    gate.touch()

    code, _, err = sweep(root, *COMMON, "--commit", "--date", D1)

    assert code == 0, err
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert porcelain(root) == "" and staging_leftovers(root) == [] and _temp_files(root) == []
    rows = history_rows(root)
    assert all(row in rows for row in old_rows) and len(rows) == len(old_rows) + 3
    assert {r["server"] for r in rows if r["date"] == D1} == {"alpha", "bravo", "charlie"}


# --------------------------------------------------------------------------------------------
# Two sweeps never interleave


@pytest.mark.slow
def test_a_second_sweep_exits_2_naming_the_holder_and_touches_nothing(template, tmp_path):
    template_root, before, _, _ = template
    root = _clone(template_root, tmp_path)
    with Stopped("promoting", "-", root, *COMMON, "--commit", "--date", D1) as first:
        staged = sorted(p.relative_to(root) for p in (root / ".staging").rglob("*"))
        for args in ((*COMMON, "--commit"), (*COMMON,), ("--merge", str(tmp_path))):
            code, out, err = sweep(root, *args)
            assert code == 2, err
            assert f"another publish holds this repository's lock" in err and f"pid {first.proc.pid} " in err
            assert "stop_at.py promoting" in err and out == ""
        measured = subprocess.run([sys.executable, "-m", "harness.cli", "measure", "--server", "alpha", "--catalog",
                                   str(root / "servers.yaml"), "--isolation", "host"], cwd=REPO, capture_output=True,
                                  text=True, timeout=120)
        assert measured.returncode == 2 and f"pid {first.proc.pid} " in measured.stderr
        assert sorted(p.relative_to(root) for p in (root / ".staging").rglob("*")) == staged  # its staging intact
        first.signal(signal.SIGKILL)
    assert head(root) == before


@pytest.mark.slow
def test_a_waiting_sweep_runs_after_the_holder_and_their_commits_do_not_mix(template, tmp_path):
    template_root, before, old_rows, _ = template
    root = _clone(template_root, tmp_path)
    release = tmp_path / "release"
    with Stopped("history", release, root, *COMMON, "--commit", "--date", D1) as first:
        second = subprocess.Popen([sys.executable, "-m", "harness.cli", "sweep", "--root", str(root), *COMMON,
                                   "--commit", "--date", "2026-11-16", "--wait"], cwd=REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            waiting = second.stderr.readline()
            assert f"waiting for the publish lock, held by pid {first.proc.pid} " in waiting, waiting
            assert second.poll() is None
            release.touch()
            assert first.wait() == 0, first.err()
            assert second.wait(120) == 0, second.stderr.read()
        finally:
            if second.poll() is None:
                os.killpg(second.pid, signal.SIGKILL)
    log = git(root, "log", "--format=%s", f"{before}..HEAD").splitlines()
    assert log == ["sweep 2026-11-16: 3 server(s) — 3 measured", "sweep 2026-11-09: 3 server(s) — 3 measured"]
    first_commit = git(root, "show", "HEAD~1:history.csv")
    assert "2026-11-09," in first_commit and "2026-11-16," not in first_commit
    rows = history_rows(root)
    assert all(row in rows for row in old_rows) and len(rows) == len(old_rows) + 6
    assert porcelain(root) == "" and staging_leftovers(root) == []
