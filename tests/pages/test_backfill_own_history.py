"""``regen --backfill`` on this repository's own history: it runs, reads every
commit of every record, and two runs (in separate processes, different hash seeds) write identical
bytes; a forward regen afterwards changes nothing. Also: a shallow clone and a non-repository are
refused with a named problem, and nothing is written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness.pages.backfill import BackfillError, backfill
from tests.conftest import REPO
from tests.db.sweeprepo import git

OUTPUTS = ("results", "docs", "badges", "history.csv")


def _published(root) -> dict[str, bytes]:
    files = {}
    for top in OUTPUTS:
        path = root / top
        items = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        files.update({str(p.relative_to(root)): p.read_bytes() for p in items})
    return files


def _regen(root, *args, seed="0") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", "regen", "--root", str(root), *args],
                          cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed})


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    if git(REPO, "rev-parse", "--is-shallow-repository").strip() == "true":
        raise AssertionError("this checkout is shallow: the backfill test needs the whole history (fetch-depth: 0)")
    root = tmp_path_factory.mktemp("own") / "repo"
    git(REPO, "clone", "-q", "--no-local", str(REPO), str(root))
    return root


@pytest.mark.slow
def test_backfill_of_this_repository_is_deterministic(clone):
    first = _regen(clone, "--backfill", seed="1")
    assert first.returncode == 0, first.stderr
    once = _published(clone)
    second = _regen(clone, "--backfill", seed="2")
    assert second.returncode == 0, second.stderr
    assert _published(clone) == once
    assert first.stdout == second.stdout and first.stderr == second.stderr
    forward = _regen(clone, seed="3")
    assert forward.returncode == 0 and _published(clone) == once
    changes = git(clone, "log", "--first-parent", "--format=%H", "--", "results/*/measurement.json").split()
    assert f"from {len(changes)} commit(s)" in first.stdout
    vectors = [name for name in once if name.endswith("/tool-vectors.json")]
    assert vectors and "results/capture-index.json" in once and "results/regressions.md" in once


@pytest.mark.slow
def test_shallow_clones_and_plain_directories_are_refused(clone, tmp_path):
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{clone}", str(shallow))
    with pytest.raises(BackfillError, match="shallow clone"):
        backfill(shallow, ["memory"])
    done = _regen(shallow, "--backfill")
    assert done.returncode == 2 and "nothing written" in done.stderr and "fetch-depth: 0" in done.stderr
    assert git(shallow, "status", "--porcelain") == ""  # nothing written
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "servers.yaml").write_text("servers: []\n", encoding="utf-8")
    with pytest.raises(BackfillError, match="not inside a git repository"):
        backfill(plain, [])
