"""Records that churn: re-sweeping servers that did not change commits only their
history rows and the pages that depend on dates — never a record, a badge or the leaderboard — and
a record is rewritten exactly when what it asserts changed. Real git repositories, fixture servers
launched on the host (some keep a launch counter in a temp file the sandbox would hide).
"""

from __future__ import annotations

import re

import pytest

from tests.db.sweeprepo import (
    catalog_text, commit_catalog, commit_count, fixture, git, head, init_repo, porcelain, records, sweep, well_behaved,
)

D1, D2 = "2026-11-02", "2026-11-09"
pytestmark = pytest.mark.slow  # each test runs two full sweeps with commits

HOST = ("--isolation", "host")
# Files a new sweep date changes even when no server did: the history, and what is drawn from it
# (pages, charts, the dashboard, cost movement's "held since" window, and the leaderboard's trend
# column, which says "since <date>" until a series has a second point).
DATE_DEPENDENT = re.compile(r"^(history\.csv|docs/index\.html|docs/servers/[^/]+\.(md|html)|docs/(sparklines|trends)/[^/]+\.svg"
                            r"|results/regressions\.(json|md)|results/leaderboard\.md)$")


def _committed(root, rev: str = "HEAD") -> list[str]:
    return sorted(git(root, "show", "--name-only", "--no-renames", "--format=", rev).split())


def _page_without_dates(text: str, *dates: str) -> list[str]:
    """A server page minus what a new sweep date legitimately changes: lines naming the dates, the
    capture line, the comparable-series sentence."""
    return [line for line in text.splitlines() if not any(d in line for d in dates)
            and not line.startswith(("Captured ", "Comparable series: "))]


def test_a_second_date_commits_only_history_and_date_dependent_pages(tmp_path, launches_in_order):
    state = tmp_path / "launches"
    entries = [("plain", well_behaved(3)),
               ("cwd", fixture("volatile", "--cwd-in-description")),
               ("noisy", fixture("volatile", "--noisy-failure")),
               ("zero", well_behaved(2, "--zero-tools")),
               ("mismatch", fixture("version_rejected")),
               ("retried", fixture("launch_script", "--state", str(state), "--script", "fail,ok"))]
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    assert sweep(root, "--all", "--commit", "--date", D1, *HOST)[0] == 0
    first = records(root)
    assert {n: r["status"] for n, r in first.items()} == {
        "plain": "measured", "cwd": "measured", "noisy": "startup-failure", "zero": "measured",
        "mismatch": "protocol-mismatch", "retried": "measured"}
    assert any("measured on retry 1" in n for n in first["retried"]["notes"])
    pages = {n: (root / f"docs/servers/{n}.md").read_text() for n in first}
    commits = commit_count(root)

    code, _, err = sweep(root, "--all", "--commit", "--date", D2, *HOST)

    assert code == 0, err
    assert commit_count(root) == commits + 1 and porcelain(root) == ""
    changed = _committed(root)
    assert "history.csv" in changed
    assert [p for p in changed if not DATE_DEPENDENT.match(p)] == [], changed  # no record, badge, leaderboard.csv
    assert records(root) == first  # byte-identical records: measuredAt is still the first capture's
    assert all(r["measuredAt"].startswith(D1) for r in records(root).values())
    rows = (root / "history.csv").read_text()
    assert all(f"{D2},{n}," in rows for n in first)  # the confirmations live in history.csv
    for name in first:
        page = (root / f"docs/servers/{name}.md").read_text()
        assert _page_without_dates(page, D1, D2) == _page_without_dates(pages[name], D1, D2), name
    assert f"Captured {D1}, last confirmed {D2}." in (root / "docs/servers/plain.md").read_text()
    assert f"Captured {D1}, last confirmed {D2}." in (root / "docs/servers/noisy.md").read_text()

    before = head(root)
    code, _, err = sweep(root, "--all", "--commit", "--date", D2, *HOST)  # the same day again: nothing at all
    assert code == 0 and head(root) == before and porcelain(root) == "", err


def test_a_record_is_rewritten_exactly_when_what_it_asserts_changed(tmp_path, launches_in_order):
    state = tmp_path / "launches"
    entries = [("steady", well_behaved(3)), ("grows", well_behaved(3)),
               ("confirms", fixture("launch_script", "--state", str(state), "--script", "ok,fail,ok"))]
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    assert sweep(root, "--all", "--commit", "--date", D1, *HOST)[0] == 0
    first = records(root)
    assert first["confirms"]["confirmed"] is False  # launch 2 (the confirmation) failed
    assert "**Unconfirmed:**" in (root / "docs/servers/confirms.md").read_text()

    commit_catalog(root, catalog_text([("steady", well_behaved(3)), ("grows", well_behaved(4)), entries[2]]))
    code, _, err = sweep(root, "--all", "--commit", "--date", D2, *HOST)

    assert code == 0, err
    now, changed = records(root), _committed(root)
    assert now["steady"] == first["steady"] and "results/steady/measurement.json" not in changed
    assert now["grows"]["toolCount"] == 4 and now["grows"]["measuredAt"].startswith(D2)  # a new capture
    assert {"results/grows/measurement.json", "badges/grows.json"} <= set(changed)
    # the same capture, now confirmed by two launches: rewritten, first taken on D1 all the same
    assert now["confirms"]["confirmed"] is True and now["confirms"]["measuredAt"] == first["confirms"]["measuredAt"]
    assert now["confirms"]["canonicalSha256"] == first["confirms"]["canonicalSha256"]
    assert "results/confirms/measurement.json" in changed and "badges/confirms.json" not in changed
    assert "**Unconfirmed:**" not in (root / "docs/servers/confirms.md").read_text()

