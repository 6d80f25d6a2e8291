"""A bot commit never carries pages drawn from changes nobody committed. The pages are drawn from
the records, history.csv and the catalog in the working tree,
so a committing publish refuses while any of them holds a change it did not make:

* before measuring, an uncommitted ``servers.yaml`` (an entry added, removed or changed) refuses
  like a dirty published path — once the commit held pages for an entry no commit had;
* a recovery (which runs before that check) or a publish whose tree changed while it measured
  stops before its commit, its journal kept, when the published paths hold changes it did not
  make — once a record deleted by hand after a crash went out as pages without that server; the
  next ``--commit`` run commits it once they are gone.
"""

from __future__ import annotations

import signal

import pytest

from tests.db.stop_at import Stopped
from tests.db.sweeprepo import (
    catalog_text, commit_catalog, git, head, history_rows, init_repo, porcelain, sweep, well_behaved,
)

D0, D1 = "2026-11-02", "2026-11-09"
COMMON = ("--all", "--isolation", "host", "--concurrency", "2")
TWO = [("alpha", well_behaved(2)), ("bravo", well_behaved(3))]


@pytest.fixture
def repo(tmp_path):
    root = init_repo(tmp_path / "repo", catalog_text(TWO))
    (root / ".gitignore").write_text(".staging/\n")
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "ignore staging")
    assert sweep(root, *COMMON, "--commit", "--date", D0)[0] == 0
    return root


@pytest.mark.slow
@pytest.mark.parametrize("catalog", [
    TWO + [("charlie", well_behaved(4))],      # an entry added
    TWO[:1],                                   # an entry removed
    [TWO[0], ("bravo", well_behaved(5))],      # an entry's launch changed
])
def test_an_uncommitted_catalog_refuses_a_committing_sweep_before_measuring(repo, catalog):
    (repo / "servers.yaml").write_text(catalog_text(catalog))
    sha, tree = head(repo), porcelain(repo)

    code, _, err = sweep(repo, *COMMON, "--commit", "--date", D1)

    assert code == 2 and "  servers.yaml\n" in err and "the pages are drawn from it" in err, err
    assert "[1/" not in err and head(repo) == sha and porcelain(repo) == tree
    assert sweep(repo, *COMMON, "--date", D1)[0] == 0  # without --commit it is the user's own tree


def _delete_bravo(root):
    (root / "results/bravo/measurement.json").unlink()


def _edit_history(root):
    with open(root / "history.csv", "a") as fh:
        fh.write("2026-10-26,bravo,1,1,measured,host\n")


def _new_record(root):
    (root / "results/zulu").mkdir()
    (root / "results/zulu/measurement.json").write_text("{}\n")


def _edit_own_record(root):  # a file the interrupted publish itself promoted, edited since
    path = root / "results/alpha/measurement.json"
    path.write_text(path.read_text().replace('"toolCount": 4', '"toolCount": 40'))


@pytest.mark.slow
@pytest.mark.parametrize("stray", [_delete_bravo, _edit_history, _new_record, _edit_own_record])
def test_a_recovery_never_commits_pages_drawn_from_changes_it_did_not_make(repo, stray):
    commit_catalog(repo, catalog_text([("alpha", well_behaved(4)), TWO[1]]))
    with Stopped("regen", "-", repo, *COMMON, "--commit", "--date", D1) as run:
        run.signal(signal.SIGKILL)
    stray(repo)
    sha = head(repo)

    code, _, err = sweep(repo, *COMMON, "--commit", "--date", D1)

    assert code == 2 and "published paths hold changes that are not committed" in err, err
    assert "is committed by the next --commit run once they are gone" in err
    assert head(repo) == sha and "[1/" not in err
    git(repo, "checkout", "--", ".")  # the user discards everything, the interrupted publish's files too
    git(repo, "clean", "-fdq", "results")
    code, _, err = sweep(repo, *COMMON, "--commit", "--date", D1)
    assert code == 0, err
    assert "finished interrupted publish" in err
    assert porcelain(repo) == "" and {(r["date"], r["server"]) for r in history_rows(repo)} >= {(D1, "alpha")}
