"""Acceptance tests of the sweep: real git repositories in temp dirs, catalogs of fixture
servers (and, in one slow test, two real pinned servers), the sweep run in-process through
``harness.cli.main``.

Methodology sections exercised: "A whole sweep is checked before any of it is published",
"Failure taxonomy", "Trends over time", "How often a row gets a new point".
"""

from __future__ import annotations

import datetime as dt

import pytest

from harness.core.jsparse import parse
from harness.db import guard
from harness.db import sweep as sweep_module
from harness.db.catalog import load_catalog
from harness.db.rotation import slice_for
from harness.probe import server_env, isolation
from tests.db.sweeprepo import (
    BOT_IDENTITY, FAIL_COMMAND, catalog_text, check_published, commit_catalog, commit_count, fixture, git, head,
    head_files, history_rows, init_repo, last_commit, porcelain, records, rows_of_text, staging_leftovers, sweep,
    well_behaved, working_files,
)

def _today() -> str:
    """Today (UTC) when asked: a run may cross midnight after collection."""
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def _fixtures(n: int, prefix: str = "fx") -> list[tuple[str, str]]:
    """``n`` well-behaved fixture servers with 3, 4, ... tools (distinct numbers)."""
    return [(f"{prefix}{i:02d}", well_behaved(3 + i)) for i in range(n)]


def _assert_clean_commit_state(root) -> None:
    assert porcelain(root) == ""
    assert working_files(root) == head_files(root)
    assert staging_leftovers(root) == []


def _empty_path(monkeypatch) -> None:
    """Simulate a broken harness machine: every launched server gets an empty PATH, so
    ``python3``/``npx``/``uvx`` cannot be found. Patched on the module launch.py calls through
    (``server_env.child_env``), wrapping the real function."""
    real = server_env.child_env
    isolation.runtime_versions()  # keep the cached runtime versions those of the healthy machine

    def broken(*args, **kwargs):
        env = real(*args, **kwargs)
        env["PATH"] = ""
        return env

    monkeypatch.setattr(server_env, "child_env", broken)


# --------------------------------------------------------------------------------------------
# One commit, valid records, idempotent rerun


@pytest.mark.slow
def test_sweep_commits_once_with_valid_records_and_rerun_changes_nothing(tmp_path):
    entries = [*_fixtures(3),
               ("empty", well_behaved(3, "--zero-tools")),
               ("broken", fixture("jsonrpc_error", "--on", "initialize")),
               ("mismatch", fixture("version_rejected"))]
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    before, commits = head(root), commit_count(root)

    code, out, err = sweep(root, "--all", "--commit")

    assert code == 0, err
    assert commit_count(root) == commits + 1
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    commit = last_commit(root)
    assert commit["author"] == BOT_IDENTITY and commit["committer"] == BOT_IDENTITY
    assert commit["message"].startswith(f"sweep {_today()}: 6 server(s)")
    _assert_clean_commit_state(root)

    recs = check_published(working_files(root))
    assert sorted(recs) == sorted(name for name, _ in entries)
    statuses = {name: rec["status"] for name, rec in recs.items()}
    assert statuses == {"fx00": "measured", "fx01": "measured", "fx02": "measured", "empty": "measured",
                        "broken": "startup-failure", "mismatch": "protocol-mismatch"}
    assert [recs[f"fx0{i}"]["toolCount"] for i in range(3)] == [3, 4, 5]
    assert recs["empty"]["toolCount"] == 0 and any("zero tools" in n for n in recs["empty"]["notes"])
    assert recs["broken"]["totalTokens"] is None and recs["broken"]["notes"]
    assert all(rec["measuredAt"].startswith(_today()) for rec in recs.values())

    rows = history_rows(root)
    assert [(r["date"], r["server"]) for r in rows] == [(_today(), n) for n in sorted(recs)]
    for row in rows:
        rec = recs[row["server"]]
        assert (row["tokens"], row["toolCount"], row["status"], row["isolation"]) == (
            _int(rec["totalTokens"]), _int(rec["toolCount"]), rec["status"], isolation.resolve_mode("auto"))
    for name, _ in entries:  # the summary names every server
        assert name in out

    published = working_files(root)
    code, out, err = sweep(root, "--all", "--commit")
    assert code == 0, err
    assert "nothing differs from HEAD, so nothing was committed" in out.splitlines()[-1]  # the summary's last line
    assert commit_count(root) == commits + 1
    assert porcelain(root) == ""
    assert working_files(root) == published


@pytest.mark.slow
def test_rerun_of_servers_that_exit_at_once_changes_nothing(tmp_path):
    """A server that exits before answering is described the same way on every run, whether the
    harness's write or its read notices first — otherwise every same-day rerun recommits it."""
    root = init_repo(tmp_path / "repo", catalog_text([(f"dead{i}", FAIL_COMMAND) for i in range(4)]))
    assert sweep(root, "--all", "--commit")[0] == 0
    commits = commit_count(root)
    for _ in range(4):
        code, _, err = sweep(root, "--all", "--commit")
        assert code == 0, err
        assert commit_count(root) == commits, err


def _int(value):
    return int(value) if isinstance(value, float) else value


@pytest.mark.slow
def test_sweep_with_real_pinned_servers(tmp_path):
    entries = [
        {"name": "memory", "command": "npx -y @modelcontextprotocol/server-memory@2026.8.31", "timeoutSeconds": 120},
        {"name": "time", "command": 'uvx --with "mcp<2" mcp-server-time==2026.8.18', "timeoutSeconds": 120},
        {"name": "fx", "command": well_behaved(4)},
    ]
    root = init_repo(tmp_path / "repo", catalog_text(entries, reference="memory"))
    commits = commit_count(root)

    code, out, err = sweep(root, "--all", "--commit")

    assert code == 0, err
    assert commit_count(root) == commits + 1
    assert last_commit(root)["author"] == BOT_IDENTITY
    _assert_clean_commit_state(root)
    recs = check_published(working_files(root))
    assert {n: r["status"] for n, r in recs.items()} == {"memory": "measured", "time": "measured", "fx": "measured"}
    assert recs["memory"]["toolCount"] > 0 and recs["time"]["toolCount"] > 0
    assert recs["memory"]["isolation"]["runtimes"]["node"].startswith("v")
    assert len(history_rows(root)) == 3

    published = working_files(root)
    code, _, err = sweep(root, "--all", "--commit")
    assert code == 0, err
    assert commit_count(root) == commits + 1
    assert porcelain(root) == "" and working_files(root) == published


# --------------------------------------------------------------------------------------------
# The harness-fault guard


@pytest.mark.slow
def test_simulated_harness_fault_publishes_nothing(tmp_path, monkeypatch):
    root = init_repo(tmp_path / "repo", catalog_text(_fixtures(7)))
    code, _, err = sweep(root, "--all", "--commit")
    assert code == 0, err
    committed, commits = head(root), commit_count(root)
    snapshot = working_files(root)
    assert len([p for p in snapshot if p.endswith("/measurement.json")]) == 7

    _empty_path(monkeypatch)
    code, out, err = sweep(root, "--all", "--commit")

    assert code == 1
    assert "harness fault: 7 of 7" in err, err
    assert "nothing was published" in err
    assert porcelain(root) == ""
    assert head(root) == committed and commit_count(root) == commits
    assert working_files(root) == snapshot == head_files(root)  # byte for byte
    assert staging_leftovers(root) == []
    assert out == ""  # no summary of unpublished records

    monkeypatch.undo()  # the machine is healthy again: the same day's rerun finds nothing to change
    code, _, err = sweep(root, "--all", "--commit")
    assert code == 0 and "harness-fault check passed: 0 of 7" in err
    assert head(root) == committed and porcelain(root) == ""


@pytest.mark.slow
def test_four_regressions_are_a_real_breakage_and_publish(tmp_path):
    entries = _fixtures(10)
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    code, _, err = sweep(root, "--all", "--commit")
    assert code == 0, err
    broken = ["fx01", "fx04", "fx06", "fx09"]
    commit_catalog(root, catalog_text([(n, FAIL_COMMAND if n in broken else c) for n, c in entries]),
                   "point four entries at a command that exits 1")
    commits = commit_count(root)

    code, out, err = sweep(root, "--all", "--commit")

    assert code == 0, err
    assert "harness-fault check passed: 4 of 10 swept server(s)" in err
    assert commit_count(root) == commits + 1
    commit = last_commit(root)
    assert commit["author"] == BOT_IDENTITY
    assert "6 measured, 4 startup-failure" in commit["message"]
    assert "harness-fault check passed" in commit["message"]
    _assert_clean_commit_state(root)

    recs = check_published(working_files(root))
    for name, rec in recs.items():
        if name in broken:
            assert rec["status"] == "startup-failure" and rec["totalTokens"] is None
            assert rec["launchCommand"] == FAIL_COMMAND
            assert any("retry" in n for n in rec["notes"]), rec["notes"]  # retried before it was published
            assert parse((root / f"badges/{name}.json").read_text())["message"] == "startup-failure"
        else:
            assert rec["status"] == "measured" and rec["totalTokens"] > 0
    rows = {r["server"]: r for r in history_rows(root) if r["date"] == _today()}
    assert len(rows) == 10
    assert {n for n, r in rows.items() if r["status"] == "startup-failure" and r["tokens"] is None} == set(broken)
    for name in broken:
        assert name in out and "startup-failure" in out


def test_no_prior_real_numbers_says_the_check_could_not_be_performed(tmp_path):
    root = init_repo(tmp_path / "repo", catalog_text(_fixtures(2)))
    code, _, err = sweep(root, "--all", "--commit")
    assert code == 0, err
    assert "harness-fault check could not be performed" in err
    assert "passed" not in err
    message = last_commit(root)["message"]
    assert "could not be performed" in message and "passed" not in message


@pytest.mark.slow
def test_zero_tool_results_are_not_real_numbers(tmp_path, monkeypatch):
    """HEAD holding only zero-tool answers is no baseline: when all of them then fail to start,
    the check could not be performed (not "passed"), and the failures publish."""
    entries = [(f"zero{i}", well_behaved(2, "--zero-tools")) for i in range(6)]
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    code, _, err = sweep(root, "--all", "--commit")
    assert code == 0, err
    assert all(r["status"] == "measured" and r["toolCount"] == 0 for r in records(root).values())
    commits = commit_count(root)

    _empty_path(monkeypatch)
    code, _, err = sweep(root, "--all", "--commit")

    assert code == 0, err
    assert "harness-fault check could not be performed" in err and "passed" not in err
    assert commit_count(root) == commits + 1
    assert all(r["status"] == "startup-failure" for r in records(root).values())
    _assert_clean_commit_state(root)


@pytest.mark.slow
def test_a_sweep_of_empty_lists_is_a_harness_fault(tmp_path):
    """The other half: servers with real numbers at HEAD coming back as zero tools regress."""
    entries = _fixtures(6)
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    assert sweep(root, "--all", "--commit")[0] == 0
    commit_catalog(root, catalog_text([(n, c + " --zero-tools") for n, c in entries]))
    committed, snapshot = head(root), working_files(root)

    code, _, err = sweep(root, "--all", "--commit")

    assert code == 1
    assert "harness fault: 6 of 6" in err
    assert head(root) == committed and porcelain(root) == "" and working_files(root) == snapshot


@pytest.mark.parametrize("regressed, eligible, fault", [
    (4, 10, False), (5, 10, True), (5, 11, False), (5, 9, True), (4, 4, False), (6, 6, True), (0, 0, None),
])
def test_guard_thresholds(regressed, eligible, fault):
    real = {"status": "measured", "toolCount": 2.0}
    failed = {"status": "timeout", "toolCount": None}
    committed = {f"s{i}": real for i in range(eligible)} | {"new": None, "zero": {"status": "measured", "toolCount": 0.0}}
    fresh = {f"s{i}": failed if i < regressed else real for i in range(eligible)} | {"new": failed, "zero": failed}
    verdict = guard.check(committed, fresh)
    if fault is None:
        assert verdict.verdict == "not-performed" and "could not be performed" in verdict.reason
    else:
        assert verdict.fault is fault
        assert verdict.verdict == ("fault" if fault else "pass")
        assert (len(verdict.regressed), verdict.eligible) == (regressed, eligible)


# --------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("bad, where, says", [
    ({"name": "alpha", "command": "python3 x.py"}, 'entry #2 (name: "alpha")', 'field "name": duplicate of entry #1'),
    ({"name": "nocmd", "category": "x"}, 'entry #2 (name: "nocmd")', 'missing both "command" and "url"'),
    ({"name": "extra", "command": "python3 x.py", "timeout": 5}, 'entry #2 (name: "extra")',
     'unknown field "timeout"'),
    ({"name": "typed", "command": "python3 x.py", "timeoutSeconds": "fast"}, 'entry #2 (name: "typed")',
     'field "timeoutSeconds": expected a number between 1 and 600, got "fast"'),
])
def test_bad_catalog_exits_2_and_measures_nothing(tmp_path, monkeypatch, bad, where, says):
    state = tmp_path / "launches"  # the good entry counts its launches here (host mode sees tmp_path)
    good = {"name": "alpha", "command": fixture("changes_between_launches", "--state", str(state))}
    root = init_repo(tmp_path / "repo", catalog_text([good, bad]))
    committed = head(root)
    measured = []
    monkeypatch.setattr(sweep_module, "measure", lambda target, **kw: measured.append(target))

    code, out, err = sweep(root, "--all", "--commit", "--isolation", "host")

    assert code == 2
    assert where in err and says in err and "servers.yaml:" in err, err
    assert out == ""
    assert not state.exists() and measured == []  # nothing was launched
    assert working_files(root) == {} and staging_leftovers(root) == []
    assert head(root) == committed and porcelain(root) == ""


def test_only_naming_an_unknown_entry_exits_2(tmp_path):
    root = init_repo(tmp_path / "repo", catalog_text(_fixtures(2)))
    code, _, err = sweep(root, "--only", "fx00,nope", "--commit")
    assert code == 2 and "nope" in err
    assert working_files(root) == {} and porcelain(root) == ""


# --------------------------------------------------------------------------------------------
# history.csv


@pytest.mark.slow
def test_history_one_row_per_date_and_server_idempotent_and_date_override(tmp_path):
    root = init_repo(tmp_path / "repo", catalog_text(_fixtures(3)))
    names = ["fx00", "fx01", "fx02"]

    assert sweep(root, "--all", "--commit")[0] == 0
    first = (root / "history.csv").read_bytes()
    assert [(r["date"], r["server"]) for r in history_rows(root)] == [(_today(), n) for n in names]

    assert sweep(root, "--all", "--commit")[0] == 0  # same day again
    assert (root / "history.csv").read_bytes() == first

    past = "2026-01-07"
    code, _, err = sweep(root, "--all", "--commit", "--date", past)
    assert code == 0, err
    assert f"sweep {past}" in err
    rows = history_rows(root)
    assert [(r["date"], r["server"]) for r in rows] == [(past, n) for n in names] + [(_today(), n) for n in names]
    assert [r for r in rows if r["date"] == _today()] == [r for r in rows_of_text(first.decode()) if r["date"] == _today()]
    # a back-dated sweep adds history rows but never replaces the newer published measurement
    assert all(rec["measuredAt"].startswith(_today()) for rec in records(root).values())
    assert last_commit(root)["message"].startswith(f"sweep {past}:")
    _assert_clean_commit_state(root)

    commits = commit_count(root)
    assert sweep(root, "--all", "--commit", "--date", past)[0] == 0
    assert commit_count(root) == commits and porcelain(root) == ""
    assert len(history_rows(root)) == 6


# --------------------------------------------------------------------------------------------
# Which entries a sweep measures


def _rotation_catalog() -> list[tuple[str, str]]:
    return [(f"srv-{c}", well_behaved(2)) for c in "abcdefghijk"]


@pytest.mark.slow
def test_default_sweep_measures_the_date_slice_and_matches_the_slice_command(tmp_path, capsys):
    from harness.cli import main

    root = init_repo(tmp_path / "repo", catalog_text(_rotation_catalog(), reference="srv-k", cycle_weeks=3))
    catalog = load_catalog(root / "servers.yaml")
    date = dt.date(2026, 11, 18)  # a past date: a future one is refused
    expected = [e.name for e in slice_for(catalog, date)]
    assert "srv-k" in expected and 1 < len(expected) < len(catalog.entries)

    code, _, err = sweep(root, "--date", date.isoformat(), "--commit")

    assert code == 0, err
    assert f"{len(expected)} server(s)" in err
    assert sorted(records(root)) == sorted(expected)
    assert [r["server"] for r in history_rows(root)] == sorted(expected)

    capsys.readouterr()
    assert main(["slice", "--date", date.isoformat(), "--catalog", str(root / "servers.yaml")]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert printed == expected

    # The next week's slice is another set (the reference is in both).
    later = date + dt.timedelta(days=7)
    following = [e.name for e in slice_for(catalog, later)]
    assert sweep(root, "--date", later.isoformat(), "--commit")[0] == 0
    assert sorted(r["server"] for r in history_rows(root) if r["date"] == later.isoformat()) == sorted(following)
    assert set(expected) & set(following) == {"srv-k"}


def test_only_measures_exactly_the_named_entries(tmp_path):
    root = init_repo(tmp_path / "repo", catalog_text(_rotation_catalog(), reference="srv-k", cycle_weeks=3))
    code, _, err = sweep(root, "--only", "srv-c, srv-a", "--commit")
    assert code == 0, err
    assert "2 server(s)" in err
    assert sorted(records(root)) == ["srv-a", "srv-c"]
    assert [r["server"] for r in history_rows(root)] == ["srv-a", "srv-c"]


@pytest.mark.slow
@pytest.mark.parametrize("date", ["2026-11-30", "2026-12-06", "2026-12-07", "2026-12-16", "2027-01-01",
                                  "2027-06-15", "2028-02-29"])
def test_slice_command_matches_slice_for_on_the_real_catalog(date, capsys):
    from harness.cli import main
    from tests.conftest import REPO

    capsys.readouterr()
    assert main(["slice", "--date", date, "--catalog", str(REPO / "servers.yaml")]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert printed == [e.name for e in slice_for(load_catalog(REPO / "servers.yaml"), dt.date.fromisoformat(date))]
