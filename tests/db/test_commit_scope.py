"""A bot commit holds exactly what its sweep published, in real git
repositories: a dirty published path refuses ``--commit`` before any server starts; the commit holds
exactly the journal's paths; ad-hoc ``measure`` never writes the database; ``--name`` cannot take a
catalog entry's name; every published measurement goes through the sweep's path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from tests.conftest import REPO
from tests.db.sweeprepo import (
    BOT_IDENTITY, catalog_text, commit_catalog, commit_count, fixture, git, head, init_repo, last_commit, porcelain,
    sweep, well_behaved, working_files,
)
from tests.db.stop_at import Stopped, journal_of

DATE = "2026-11-02"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A repository with one committed sweep of two fixture servers, then a committed catalog that
    adds a server counting its launches in ``launches`` (so a test can tell whether anything was
    started) and a url entry. Built once; each test works on a clone."""
    base = tmp_path_factory.mktemp("scope")
    entries = [("alpha", well_behaved(3)), ("bravo", well_behaved(4))]
    root = init_repo(base / "repo", catalog_text(entries))
    code, _, err = sweep(root, "--all", "--commit", "--date", DATE, "--isolation", "host")
    assert code == 0, err
    counter = {"name": "counter", "command": fixture("changes_between_launches", "--state", str(base / "launches"))}
    commit_catalog(root, catalog_text([*entries, counter, {"name": "remote", "url": "https://example.invalid/mcp"}]))
    return root, base / "launches"


@pytest.fixture
def repo(template, tmp_path):
    root, launches = template
    clone = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    git(clone, "config", "user.name", "Test Human")
    git(clone, "config", "user.email", "human@example.com")
    launches.unlink(missing_ok=True)
    return clone, launches


def _dirty_alpha_record(root):
    path = root / "results/alpha/measurement.json"
    path.write_text(path.read_text().replace('"status": "measured"', '"status": "measured" ', 1))
    return ["results/alpha/measurement.json"]


def _adhoc_record(root):
    path = root / "results/zulu/measurement.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")
    return ["results/zulu/measurement.json"]


def _staged_badge(root):
    (root / "badges/alpha.json").write_text('{"schemaVersion":1,"label":"context cost","message":"1 token","color":"green"}\n')
    git(root, "add", "badges/alpha.json")
    return ["badges/alpha.json"]


def _history_edit(root):
    with open(root / "history.csv", "a") as fh:
        fh.write("2026-10-26,alpha,1,1,measured,host\n")
    return ["history.csv"]


def _deleted_page(root):
    (root / "docs/servers/bravo.md").unlink()
    return ["docs/servers/bravo.md"]


def _untracked_page_and_chart(root):
    (root / "docs/servers/yankee.md").write_text("# yankee\n")
    (root / "docs/trends/yankee.svg").write_text("<svg/>\n")
    return ["docs/servers/yankee.md", "docs/trends/yankee.svg"]


def _leaderboard_and_badge(root):
    (root / "results/leaderboard.md").write_text("hand edit\n")
    (root / "badges/bravo.json").unlink()
    return ["badges/bravo.json", "results/leaderboard.md"]


@pytest.mark.slow
@pytest.mark.parametrize("make_dirty", [_dirty_alpha_record, _adhoc_record, _staged_badge, _history_edit,
                                        _deleted_page, _untracked_page_and_chart, _leaderboard_and_badge])
def test_a_dirty_published_path_refuses_before_any_server_starts(repo, make_dirty):
    root, launches = repo
    before, commits = head(root), commit_count(root)
    named = make_dirty(root)
    dirty_tree = working_files(root)

    code, out, err = sweep(root, "--all", "--commit", "--isolation", "host")

    assert code == 2, err
    assert "published paths hold changes that are not committed" in err and "nothing was measured" in err
    for path in named:
        assert f"  {path}\n" in err, (path, err)
    assert not launches.exists()  # no server was started
    assert head(root) == before and commit_count(root) == commits
    assert working_files(root) == dirty_tree  # and nothing was touched


@pytest.mark.slow
def test_changes_outside_the_published_paths_neither_refuse_nor_ride_along(repo):
    root, _ = repo
    (root / "README.md").write_text("a note of my own\n")
    (root / "docs").joinpath("NOTES.md").write_text("hand-written docs are not published output\n")
    git(root, "add", "README.md")  # the user's own staged work

    code, _, err = sweep(root, "--only", "alpha,bravo", "--commit", "--isolation", "host")

    assert code == 0, err
    files = git(root, "show", "--name-only", "--no-renames", "--format=", "HEAD").split()
    assert "README.md" not in files and "docs/NOTES.md" not in files
    assert git(root, "diff", "--cached", "--name-only").split() == ["README.md"]  # still staged, still the user's
    assert sorted(porcelain(root).splitlines()) == ["?? docs/NOTES.md", "A  README.md"]


@pytest.mark.slow
def test_a_clean_commit_holds_exactly_the_journals_paths(repo, tmp_path):
    """The sweep is stopped right after its journal records the commit step (tests/db/stop_at.py),
    the journal is read, the sweep released: its commit is exactly the journal's files plus the
    pages it lists as regenerated."""
    root, _ = repo
    (root / "servers.yaml").write_text(catalog_text([("alpha", well_behaved(5)), ("charlie", well_behaved(2))]))
    git(root, "commit", "-q", "-am", "alpha grows, charlie joins, bravo and the counter leave")
    release = tmp_path / "release"
    with Stopped("commit", release, root, "--all", "--commit", "--date", "2026-11-09", "--isolation", "host") as run:
        journal = journal_of(run.stopped_at)
        release.touch()
        assert run.wait() == 0, run.err()
    committed = set(git(root, "show", "--name-only", "--no-renames", "--format=", "HEAD").split())
    assert committed == set(journal["files"] + journal["history"] + journal["regenerated"])
    assert journal["history"] == ["history.csv"]
    assert set(journal["files"]) == {"results/alpha/measurement.json", "badges/alpha.json",
                                     "results/charlie/measurement.json", "badges/charlie.json"}
    assert {"docs/servers/bravo.md", "docs/servers/charlie.md", "results/leaderboard.md"} <= set(journal["regenerated"])
    assert not (root / "docs/servers/bravo.md").exists()  # removed by regen, the removal committed
    assert last_commit(root)["author"] == BOT_IDENTITY and porcelain(root) == ""


# --------------------------------------------------------------------------------------------
# measure: ad hoc outside the database, the catalog path through the sweep's


def _measure(cwd, *args):
    return subprocess.run([sys.executable, "-m", "harness.cli", "measure", *args, "--isolation", "host"], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.mark.parametrize("name, command", [
    ("alpha", fixture("never_answers")),          # another command
    ("alpha", well_behaved(3) + " --ping"),       # the same program, other arguments
    ("remote", fixture("well_behaved")),          # a url entry's name, given a command
])
def test_a_catalog_name_with_another_launch_is_refused(repo, name, command):
    root, _ = repo
    tree = working_files(root)
    done = _measure(root, "--command", command, "--name", name)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"--name {name!r} is the catalog entry" in done.stderr and f"--server {name}" in done.stderr
    assert working_files(root) == tree and not (root / ".mcp-context-cost").exists() and porcelain(root) == ""


@pytest.mark.slow
def test_ad_hoc_measures_go_to_the_gitignored_folder_or_out_never_the_database(repo, tmp_path):
    root, _ = repo
    tree = working_files(root)
    same = _measure(root, "--command", well_behaved(3), "--name", "alpha")  # the entry's own launch: allowed
    assert same.returncode == 0, same.stderr
    assert (root / ".mcp-context-cost/results/alpha/measurement.json").is_file()
    failed = _measure(root, "--command", fixture("jsonrpc_error", "--on", "initialize"), "--name", "broken")
    assert failed.returncode == 3
    assert (root / ".mcp-context-cost/badges/broken.json").is_file() and not (root / "badges/broken.json").exists()
    out = _measure(root, "--command", well_behaved(2), "--name", "elsewhere", "--out", str(tmp_path / "out"))
    assert out.returncode == 0 and (tmp_path / "out/results/elsewhere/measurement.json").is_file()
    for folder in ("--results", "--badges"):
        refused = _measure(root, "--command", well_behaved(2), "--name", "sneaky", folder, folder[2:])
        assert refused.returncode == 2 and "inside the database's published" in refused.stderr
    assert working_files(root) == tree  # results/, badges/, history.csv, docs/ untouched


@pytest.mark.slow
def test_measure_server_publishes_through_the_sweep_path_and_blocks_a_bot_commit(repo):
    root, launches = repo
    done = _measure(root, "--server", "bravo")
    assert done.returncode == 0, done.stderr
    assert "kept as it is" in done.stderr  # the same capture: the record stays, a history row is added
    history = (root / "history.csv").read_text()
    assert f"{DATE},bravo," in history and history.count(",bravo,") == 2
    dirty = {line[3:] for line in porcelain(root).splitlines()}
    assert {"history.csv", "docs/servers/bravo.md"} <= dirty
    assert not dirty & {"results/bravo/measurement.json", "badges/bravo.json"}
    assert (root / "results/bravo/measurement.json").read_text() == git(root, "show", "HEAD:results/bravo/measurement.json")

    code, _, err = sweep(root, "--all", "--commit", "--isolation", "host")
    assert code == 2 and "  history.csv\n" in err and not launches.exists()

    refused = _measure(root, "--server", "bravo", "--name", "x", "--env", "API_KEY")
    assert refused.returncode == 2 and "--name, --env apply to --command/--url only" in refused.stderr


# --------------------------------------------------------------------------------------------
# One path for every published measurement: the workflows


PUSH_SCRIPT = ".github/scripts/push.sh"  # how this repository's workflows push


def _workflow(name: str) -> dict:
    doc = yaml.safe_load((REPO / ".github" / "workflows" / name).read_text())
    return {**doc, "on": doc.get("on", doc.get(True))}


def test_every_publishing_workflow_goes_through_the_sweep():
    """A job that pushes never measures outside the sweep, and never stages records, badges or
    history by hand (jobs that push other readings, e.g. results/divergence.json, or propose a
    servers.yaml change in a pull request, may push without the sweep). Its measurements come from
    a read-only job that launches the servers into a shard, sandboxed, and it merges that shard."""
    publishers = []
    for path in sorted((REPO / ".github" / "workflows").glob("*.yml")):
        for job_name, job in _workflow(path.name)["jobs"].items():
            runs = "\n".join(step.get("run", "") for step in job.get("steps", []))
            if "git push" not in runs and PUSH_SCRIPT not in runs:
                continue
            assert "mcp-context-cost measure" not in runs, (path.name, job_name)
            for line in (line for line in runs.splitlines() if "git add" in line):
                assert not re.search(r"badges|history\.csv|measurement\.json", line), (path.name, job_name, line)
            if "mcp-context-cost sweep" in runs:
                assert "sweep --merge shards/" in runs and "--commit" in runs, (path.name, job_name)
                assert "git commit" not in runs, (path.name, job_name)
                publishers.append((path.name, job_name))
    assert publishers == [("self-badge.yml", "publish"), ("sweep.yml", "publish")]
    jobs = _workflow("self-badge.yml")["jobs"]
    measure, publish = ("\n".join(s.get("run", "") for s in jobs[j]["steps"]) for j in ("measure", "publish"))
    assert 'sweep --only "$ref" --shard 1/1 --out reference --isolation sandbox' in measure
    assert "bubblewrap" in measure  # the same isolation as the weekly sweep, so its history row is comparable
    assert "sweep --merge shards/reference --commit" in publish
    assert 'verify "results/$ref/measurement.json"' in publish
    assert PUSH_SCRIPT not in measure and "git push" not in measure


def test_the_repository_ignores_the_ad_hoc_folder_and_the_atomic_writers_temp_files():
    ignored = (REPO / ".gitignore").read_text().split()
    assert ".mcp-context-cost/" in ignored and ".*.tmp" in ignored and ".staging/" in ignored
