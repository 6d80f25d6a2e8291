"""An interruption while an interrupted publish is being finished. The sweep that recovers
is itself killed or interrupted at each step of the replay; the one after it finishes the first
publish — once: one commit for it, every history row, no stray file — and then does its own.
"""

from __future__ import annotations

import signal

import pytest

from tests.db.stop_at import Stopped
from tests.db.sweeprepo import (
    BOT_IDENTITY, catalog_text, check_published, commit_catalog, git, history_rows, init_repo, last_commit,
    porcelain, records, staging_leftovers, sweep, well_behaved, working_files,
)

D0, D1, D2 = "2026-11-02", "2026-11-09", "2026-11-16"
COMMON = ("--all", "--isolation", "host", "--concurrency", "2")


@pytest.mark.slow
@pytest.mark.parametrize("replay_step, sig", [("promoting", signal.SIGKILL), ("regen", signal.SIGKILL),
                                               ("history", signal.SIGINT), ("commit", signal.SIGINT)],
                         ids=["promoting-SIGKILL", "regen-SIGKILL", "history-SIGINT", "commit-SIGINT"])
def test_a_recovery_interrupted_at_any_step_is_finished_once_by_the_next_sweep(tmp_path, replay_step, sig):
    root = init_repo(tmp_path / "repo", catalog_text([("alpha", well_behaved(2)), ("bravo", well_behaved(3))]))
    assert sweep(root, *COMMON, "--commit", "--date", D0)[0] == 0
    commit_catalog(root, catalog_text([("alpha", well_behaved(4)), ("bravo", well_behaved(3))]))
    commits = int(git(root, "rev-list", "--count", "HEAD"))

    with Stopped("history", "-", root, *COMMON, "--commit", "--date", D1) as first:  # the D1 publish, half done
        first.signal(signal.SIGKILL)
    with Stopped(replay_step, "-", root, *COMMON, "--commit", "--date", D2) as second:  # pauses inside the replay
        assert f"{D1}-" in second.stopped_at  # the D1 journal, not a D2 one: nothing of D2 was measured
        second.signal(sig)

    code, _, err = sweep(root, *COMMON, "--commit", "--date", D2)

    assert code == 0, err
    keys = {(r["date"], r["server"]) for r in history_rows(root)}
    assert keys == {(d, s) for d in (D0, D1, D2) for s in ("alpha", "bravo")}
    messages = git(root, "log", "--format=%s", "HEAD").splitlines()
    assert sum(m.startswith(f"sweep {D1}") for m in messages) == 1 and messages[0].startswith(f"sweep {D2}")
    assert int(git(root, "rev-list", "--count", "HEAD")) == commits + 2
    assert last_commit(root)["author"] == BOT_IDENTITY
    assert records(root)["alpha"]["toolCount"] == 4
    assert porcelain(root) == "" and staging_leftovers(root) == []
    check_published(working_files(root))
