"""Where a publish may write: never through a symbolic link,
never outside the published folders, and ad-hoc outputs never inside them (harness.db.confine).

Kinds, each with several variants, in real git repositories:

1. a symbolic link where the database is written (``.staging``, ``docs``, ``docs/servers``,
   ``results/<name>``, ``badges``, ``history.csv``, a record, a staged copy, the no-repository
   lock) — once ``.staging -> <folder>`` made a sweep delete every folder in ``<folder>``, and
   ``docs/servers -> <folder>`` made regen delete its ``.md`` files: refused before anything is
   measured, nothing outside touched; and a link planted while a publish is interrupted stops the
   recovery with the journal kept, which finishes once the link is gone. Of the same kind: a
   folder, file or fifo where the publisher writes the other (once a publish that failed halfway,
   and a recovery that failed the same way forever; a fifo hung the sweep);
2. a journal naming paths outside the published folders (``.git/hooks/…`` ran as a post-commit
   hook; ``servers.yaml`` was replaced and committed by the bot): left for a human, nothing moved;
3. ad-hoc output folders (``measure --out/--results/--badges``, ``sweep --shard --out``) that land,
   links followed, in a published folder: refused before anything is launched;
4. a lock file planted by someone else (a link to another file, a folder, a pipe): exit 2 naming
   it, the other file untouched.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from harness.cli.sweep_cmd import PAGES
from harness.db import confine
from harness.db.commit import commit_paths
from harness.db.lock import lock_path
from harness.db import publish
from harness.db.journal import JOURNAL, STAGING_DIR
from tests.db.stop_at import Stopped
from tests.db.sweeprepo import (
    catalog_text, commit_catalog, git, head, history_rows, init_repo, porcelain, staging_leftovers, sweep,
    well_behaved,
)

D0, D1 = "2026-11-02", "2026-11-09"
HOST = ("--isolation", "host", "--concurrency", "2")
REFUSED_LINKS = confine.REFUSAL


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A repository with one committed sweep of two fixture servers on D0."""
    root = init_repo(tmp_path_factory.mktemp("confine") / "repo",
                     catalog_text([("alpha", well_behaved(2)), ("bravo", well_behaved(3))]))
    code, _, err = sweep(root, "--all", *HOST, "--commit", "--date", D0)
    assert code == 0, err
    return root


@pytest.fixture
def repo(template, tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)
    return root


@pytest.fixture
def outside(tmp_path):
    """A folder beside the repository, with what a careless write or delete would destroy."""
    victim = tmp_path / "outside"
    (victim / "keep").mkdir(parents=True)
    (victim / "keep" / "notes.md").write_text("keep me\n")
    (victim / "diary.md").write_text("secret diary\n")
    (victim / "measurement.json").write_text('{"secret": "not a record"}\n')
    (victim / "history.csv").write_text("not the history\n")
    return victim


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder`` (links not followed): file bytes, or None for a folder/link."""
    out = {}
    for path in sorted(folder.rglob("*")):
        out[str(path.relative_to(folder))] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return out


def plant(root: Path, relative: str, target: Path | str, commit: bool) -> None:
    """Replace ``root/relative`` (file or folder) by a symbolic link to ``target``; commit it
    when ``commit`` (a link that arrived in a merged pull request)."""
    path = root / relative
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(str(target), path)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"plant {relative}")


# --------------------------------------------------------------------------------------------
# 1. links where the database is written

LINKS = [  # (where, points at: "outside" / "repo" / a file under outside, committed)
    (".staging", "outside", False),
    (".staging", "repo", False),  # would have emptied the repository itself, .git included
    ("docs", "outside", True),
    ("docs/servers", "outside", True),
    ("results/alpha", "outside", True),
    ("badges", "outside", True),
    ("history.csv", "outside/history.csv", True),
    ("results/bravo/measurement.json", "outside/measurement.json", True),
    (f"{STAGING_DIR}/2026-11-01-1/results/alpha", "outside", False),
]


def _target(spec: str, root: Path, outside: Path) -> Path:
    if spec == "repo":
        return root
    return outside if spec == "outside" else outside / spec.split("/", 1)[1]


@pytest.mark.slow
@pytest.mark.parametrize("where, points_at, committed", LINKS, ids=[f"{w}->{p}" for w, p, _ in LINKS])
@pytest.mark.parametrize("commit_flag", [(), ("--commit",)], ids=["no-commit", "commit"])
def test_a_link_where_the_database_is_written_refuses_before_measuring(repo, outside, where, points_at, committed,
                                                                       commit_flag):
    plant(repo, where, _target(points_at, repo, outside), committed)
    before, sha, tree = snapshot(outside), head(repo), porcelain(repo)

    code, out, err = sweep(repo, "--all", *HOST, *commit_flag, "--date", D1)

    assert code == 2, err
    assert REFUSED_LINKS in err and where in err and "nothing was measured" in err
    assert "[1/" not in err and not out  # no server started
    assert snapshot(outside) == before
    assert head(repo) == sha and porcelain(repo) == tree
    assert (repo / ".git").is_dir() and (repo / "servers.yaml").is_file()


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "x").write_text("1\n")


def _file(path: Path) -> None:
    shutil.rmtree(path)
    path.write_text("not a folder\n")


MISSHAPEN = {  # what stands where the publisher writes: once the rename failed after others moved,
    # and every later recovery failed the same way (or, a fifo, the sweep hung reading it)
    "results/bravo/measurement.json": _folder,
    "results/bravo/tool-vectors.json": _folder,
    "badges/alpha.json": _folder,
    "docs/servers": _file,
    "results/alpha": _file,
    "results/alpha/measurement.json": lambda p: (p.unlink(), os.mkfifo(p)),
    "history.csv": _folder,
    "docs/index.html": _folder,
}


@pytest.mark.timeout(300)  # the fifo once hung the sweep
@pytest.mark.parametrize("where", sorted(MISSHAPEN))
def test_a_folder_file_or_fifo_where_the_publisher_writes_refuses_before_measuring(repo, where):
    MISSHAPEN[where](repo / where)
    if not (repo / where).exists() or (repo / where).is_dir() or (repo / where).is_file():
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"misshapen {where}")
    sha, tree = head(repo), porcelain(repo)

    code, out, err = sweep(repo, "--all", *HOST, "--commit", "--date", D1)

    assert code == 2 and REFUSED_LINKS in err and where in err and "[1/" not in err, err
    assert head(repo) == sha and porcelain(repo) == tree and staging_leftovers(repo) == []


def test_hand_written_files_in_the_published_folders_are_no_obstacle(repo):
    for relative in ("results/README", "results/NOTES.txt", "docs/servers/README.md", "badges/LICENSE"):
        (repo / relative).write_text("hand-written\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hand-written notes")
    assert confine.obstacles(repo) == []


def test_measure_server_refuses_a_link_too(repo, outside, monkeypatch):
    from harness.cli import main

    plant(repo, "docs/servers", outside, True)
    before = snapshot(outside)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["measure", "--server", "alpha", "--catalog", str(repo / "servers.yaml"), "--isolation", "host"])
    assert code == 2 and REFUSED_LINKS in err.getvalue()
    assert snapshot(outside) == before and porcelain(repo) == ""


def test_a_repository_without_git_refuses_a_linked_lock(tmp_path, outside):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "servers.yaml").write_text(catalog_text([("alpha", well_behaved(2))]))
    (root / STAGING_DIR).mkdir()
    os.symlink(outside / "diary.md", root / STAGING_DIR / "LOCK")
    before = snapshot(outside)
    code, _, err = sweep(root, "--all", *HOST, "--date", D1)
    assert code == 2 and REFUSED_LINKS in err and f"{STAGING_DIR}/LOCK" in err
    assert snapshot(outside) == before and not (root / "results").exists()


@pytest.mark.slow
def test_a_link_planted_during_an_interrupted_publish_stops_recovery_until_it_is_gone(repo, outside, tmp_path):
    commit_catalog(repo, catalog_text([("alpha", well_behaved(5)), ("bravo", well_behaved(3))]))
    with Stopped("promoting", "-", repo, "--all", *HOST, "--commit", "--date", D1) as run:
        journal = Path(run.stopped_at)
        run.signal(signal.SIGKILL)
    assert journal.is_file()
    plant(repo, "results/alpha", outside, False)
    before, sha = snapshot(outside), head(repo)

    code, _, err = sweep(repo, "--all", *HOST, "--commit", "--date", D1)

    assert code == 2 and REFUSED_LINKS in err and "results/alpha" in err
    assert journal.is_file() and snapshot(outside) == before and head(repo) == sha
    (repo / "results/alpha").unlink()
    git(repo, "checkout", "--", "results/alpha")

    code, _, err = sweep(repo, "--all", *HOST, "--commit", "--date", D1)
    assert code == 0, err
    assert "finished interrupted publish" in err and not journal.exists() and staging_leftovers(repo) == []
    assert {(r["date"], r["server"]) for r in history_rows(repo)} >= {(D1, "alpha"), (D1, "bravo")}
    assert json.loads((repo / "results/alpha/measurement.json").read_text())["toolCount"] == 5
    assert porcelain(repo) == "" and snapshot(outside) == before


# --------------------------------------------------------------------------------------------
# 2. a journal naming paths outside the published folders

HOOK = ".git/hooks/post-commit"
JOURNALS = [
    {"files": [HOOK]},
    {"files": ["servers.yaml"]},
    {"files": ["results/alpha/../../servers.yaml"]},
    {"files": ["/tmp/elsewhere.json"]},
    {"files": ["results/*"]},
    {"files": ["results/.hidden/measurement.json"]},
    {"files": ["docs/METHODOLOGY.md"]},  # hand-written docs are not the publisher's
    {"files": ["results/alpha/measurement.json\n"]},
    {"files": [], "history": ["servers.yaml"]},
    {"files": [], "regenerated": [".git/config"]},
    {"files": [], "message": ["not", "a", "string"]},
]


def _plant_journal(root: Path, journal: dict, marker: Path) -> Path:
    run = root / STAGING_DIR / "2026-11-01-99"
    hook = run / HOOK
    hook.parent.mkdir(parents=True)
    hook.write_text(f"#!/bin/sh\necho pwned > {marker}\n")
    hook.chmod(0o755)
    (run / "servers.yaml").write_text("servers: []\n")
    (run / JOURNAL).write_text(json.dumps({"history": [], "message": "innocent sweep", **journal}))
    return run


@pytest.mark.parametrize("journal", JOURNALS, ids=[json.dumps(j)[:60] for j in JOURNALS])
def test_a_journal_naming_paths_outside_the_published_folders_is_left_for_a_human(repo, tmp_path, journal):
    marker = tmp_path / "pwned"
    run = _plant_journal(repo, journal, marker)
    catalog, sha = (repo / "servers.yaml").read_bytes(), head(repo)

    lines = publish.recover(repo, PAGES)

    assert len(lines) == 1 and lines[0].startswith("left for a human: "), lines
    assert "outside the published" in lines[0] or "not a string" in lines[0], lines
    assert not (repo / HOOK).exists() and not marker.exists()
    assert (repo / "servers.yaml").read_bytes() == catalog and head(repo) == sha
    assert (run / JOURNAL).is_file()  # a human decides


@pytest.mark.slow
def test_a_sweep_beside_a_hostile_journal_commits_only_its_own_paths(repo, tmp_path):
    marker = tmp_path / "pwned"
    _plant_journal(repo, {"files": [HOOK, "servers.yaml"]}, marker)
    catalog = (repo / "servers.yaml").read_bytes()

    code, _, err = sweep(repo, "--all", *HOST, "--commit", "--date", D1)

    assert code == 0, err
    assert "left for a human" in err
    assert not marker.exists() and not (repo / HOOK).exists() and (repo / "servers.yaml").read_bytes() == catalog
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert changed and all(confine.in_scope(p) for p in changed), changed


@pytest.mark.parametrize("files", [
    ["results/alpha/measurement.json"],  # a forged record with its journal
    ["badges/alpha.json"],
    [],                                  # a journal alone
])
def test_a_staging_folder_that_git_tracks_is_refused_never_finished(repo, files):
    run = repo / STAGING_DIR / "2026-11-01-7"
    for relative in files:
        (run / relative).parent.mkdir(parents=True, exist_ok=True)
        (run / relative).write_text('{"forged": true}\n')
    run.mkdir(parents=True, exist_ok=True)
    (run / JOURNAL).write_text(json.dumps({"files": files, "history": [], "message": "sweep 2026-11-01: forged"}))
    git(repo, "add", "-f", STAGING_DIR)
    git(repo, "commit", "-q", "-m", "a pull request carrying a staging folder")
    published = {p: (repo / p).read_bytes() for p in ("results/alpha/measurement.json", "badges/alpha.json")}
    sha = head(repo)

    code, _, err = sweep(repo, "--all", *HOST, "--commit", "--date", D1)

    assert code == 2 and "git tracks files in the staging folder" in err and "[1/" not in err, err
    assert f"{STAGING_DIR}/2026-11-01-7/{JOURNAL}" in err
    assert {p: (repo / p).read_bytes() for p in published} == published and head(repo) == sha


@pytest.mark.parametrize("path", ["servers.yaml", ".git/config", "docs/METHODOLOGY.md", "results/../README.md",
                                  "results/a\nb"])
def test_commit_paths_never_commits_outside_the_published_folders(repo, path):
    (repo / "servers.yaml").write_text("servers: []\n")
    sha = head(repo)
    with pytest.raises(confine.Unsafe):
        commit_paths(repo, "bot", ["history.csv", path])
    assert head(repo) == sha


# --------------------------------------------------------------------------------------------
# 3. ad-hoc outputs that land in a published folder


def _measure(args: list[str]) -> tuple[int, str]:
    from harness.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["measure", "--command", well_behaved(2), "--name", "adhoc", "--isolation", "host", "--single",
                     *args])
    return code, err.getvalue()


AD_HOC = [
    ["--out", "results"],
    ["--out", "badges"],
    ["--out", "docs/servers"],
    ["--out", "."],
    ["--results", "results/mine"],
    ["--badges", "badges/mine"],
    ["--out", "via-link"],          # via-link -> the repository root
    ["--out", "leaf"],              # leaf/results/adhoc -> results/alpha
    ["--out", "{repo}/docs/trends", "--catalog", "{repo}/servers.yaml"],  # from another folder
]


@pytest.mark.parametrize("args", AD_HOC, ids=[" ".join(a[:2]) for a in AD_HOC])
def test_ad_hoc_outputs_inside_a_published_folder_are_refused(repo, tmp_path, monkeypatch, args):
    os.symlink(repo, repo / "via-link")
    (repo / "leaf/results").mkdir(parents=True)
    os.symlink(repo / "results/alpha", repo / "leaf/results/adhoc")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere if "{repo}" in " ".join(args) else repo)
    tree, alpha = porcelain(repo), (repo / "results/alpha/measurement.json").read_bytes()

    code, err = _measure([a.replace("{repo}", str(repo)) for a in args])

    assert code == 2 and "inside the database's published" in err, err
    assert porcelain(repo) == tree and (repo / "results/alpha/measurement.json").read_bytes() == alpha
    assert not (repo / ".mcp-context-cost").exists() and not (elsewhere / ".mcp-context-cost").exists()


def test_ad_hoc_output_outside_any_database_is_written(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no servers.yaml here: "results" is just a folder
    code, err = _measure(["--out", "."])
    assert code == 0, err
    assert (tmp_path / "results/adhoc/measurement.json").is_file() and (tmp_path / "badges/adhoc.json").is_file()


@pytest.mark.parametrize("out", [".", "results", "docs/sparklines", "via-link", "leaf", f"{STAGING_DIR}/part"])
def test_a_shard_out_inside_a_published_folder_is_refused(repo, out):
    os.symlink(repo, repo / "via-link")
    (repo / "leaf/results").mkdir(parents=True)
    os.symlink(repo / "results/bravo", repo / "leaf/results/alpha")
    tree = porcelain(repo)

    code, _, err = sweep(repo, "--all", *HOST, "--shard", "1/1", "--out", str(repo / out), "--date", D1)

    assert code == 2 and ("inside the database's published" in err or "every publish empties" in err), err
    assert porcelain(repo) == tree and not (repo / "shard.json").exists() and staging_leftovers(repo) == []


# --------------------------------------------------------------------------------------------
# 4. a lock file planted by someone else


def _plant_lock(root: Path, kind: str, outside: Path) -> None:
    path = lock_path(root)
    path.unlink(missing_ok=True)  # the last sweep's, free
    if kind == "link":
        os.symlink(outside / "diary.md", path)
    elif kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)


@pytest.mark.parametrize("kind", ["link", "folder", "fifo"])
def test_a_planted_lock_file_is_refused_and_what_it_points_at_is_untouched(repo, outside, kind):
    from harness.cli import main

    _plant_lock(repo, kind, outside)
    before, sha = snapshot(outside), head(repo)

    code, out, err = sweep(repo, "--all", *HOST, "--commit", "--date", D1)
    assert code == 2 and "cannot take the publish lock" in err and "[1/" not in err, err

    err2 = io.StringIO()
    with contextlib.redirect_stderr(err2), contextlib.redirect_stdout(io.StringIO()):
        code2 = main(["measure", "--server", "alpha", "--catalog", str(repo / "servers.yaml"), "--isolation", "host"])
    assert code2 == 2 and "cannot take the publish lock" in err2.getvalue()
    assert snapshot(outside) == before and head(repo) == sha and porcelain(repo) == ""
