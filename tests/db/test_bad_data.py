"""Bad committed data is reported per file, never a traceback, and never blocks measuring and
publishing the rest; the harness-fault guard judges everything a sweep would publish.
Real git repositories, fixture servers on the host.
"""

from __future__ import annotations

import pytest

from harness.db.history import read_lenient
from tests.db.sweeprepo import (
    FAIL_COMMAND, catalog_text, commit_catalog, commit_count, fixture, git, head, history_rows, init_repo, porcelain,
    records, sweep, well_behaved, working_files,
)

D1, D2 = "2026-11-02", "2026-11-09"
HOST = ("--isolation", "host")


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = init_repo(tmp_path_factory.mktemp("bad") / "repo", catalog_text([("alpha", well_behaved(3)),
                                                                            ("bravo", well_behaved(4))]))
    code, _, err = sweep(root, "--all", "--commit", "--date", D1, *HOST)
    assert code == 0, err
    return root


@pytest.fixture
def repo(template, tmp_path):
    clone = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(template), str(clone))
    git(clone, "config", "user.name", "Test Human")
    git(clone, "config", "user.email", "human@example.com")
    return clone


def _commit_by_hand(root, message="a hand edit"):
    git(root, "commit", "-q", "-am", message)


@pytest.mark.parametrize("line, says", [
    ("2026-10-26,alpha,12,3,measured", None),  # five cells: an old row, valid (isolation not recorded)
    ("2026-10-26,alpha,12,3", "expected 6 cells"),
    ("2026-13-01,alpha,12,3,measured,host", "date must be YYYY-MM-DD"),
    ("2026-10-26,alpha,,,measured,host", "tokens must be a whole number for status measured"),
    ("2026-10-26,Alpha Server,12,3,measured,host", "server must be a slug"),
    ("2026-10-26,alpha,12,3,great,host", "status must be one of"),
    ("2026-10-26,alpha,12,3,measured,laptop", "isolation must be host, sandbox, docker or empty"),
    ("2026-10-26,al\x1b[2Jpha\u202e,12,3,measured,host", "server must be a slug, got 'al\\x1b[2Jpha\\u202e'"),
])
@pytest.mark.slow
def test_a_malformed_history_row_is_reported_kept_and_the_sweep_publishes(repo, line, says):
    with open(repo / "history.csv", "a") as fh:
        fh.write(line + "\n")
    _commit_by_hand(repo)
    number = len((repo / "history.csv").read_text().splitlines())
    commits = commit_count(repo)

    code, _, err = sweep(repo, "--only", "alpha", "--commit", "--date", D2, *HOST)

    assert code == 0, err
    assert "Traceback" not in err and "\x1b" not in err and "\u202e" not in err  # committed text, escaped
    assert commit_count(repo) == commits + 1 and porcelain(repo) == ""
    text = (repo / "history.csv").read_text()
    assert f"{D2},alpha," in text  # this sweep's row is published
    if says is None:
        assert "problem:" not in err
        return
    assert f"problem: history.csv:{number}: {says}" in err and "(kept as it is; fix it by hand)" in err
    assert text.endswith(line + "\n")  # kept verbatim, never dropped
    assert "pages not regenerated: history.csv:" in err
    assert [r.server for r in read_lenient(repo / "history.csv")[0] if r.date == D2] == ["alpha"]


@pytest.mark.parametrize("text, says", [
    ("{not json", "not JSON"),
    ('{"server": "someone-else", "status": "measured"}', "expected 'bravo' (the directory's name)"),
    ('{"server": "bravo", "status": "great"}', "is not one of the"),
    ('{"server": "bravo", "status": "measured", "totalTokens": 3, "toolCount": 1}', "without a rawToolsCapture"),
    ("\udcff", "cannot read"),
])
def test_an_unrelated_malformed_record_is_named_and_the_rest_is_published(repo, text, says):
    path = repo / "results/bravo/measurement.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    _commit_by_hand(repo, "bravo's record broken by hand")
    bravo = path.read_bytes()

    code, out, err = sweep(repo, "--only", "alpha", "--commit", "--date", D2, *HOST)

    assert code == 0, err
    assert "Traceback" not in err and "alpha" in out
    assert f"problem: pages not regenerated: {path}: " in err and says in err
    assert path.read_bytes() == bravo  # left for a human, never rewritten
    assert f"{D2},alpha," in (repo / "history.csv").read_text()
    committed = git(repo, "show", "--name-only", "--no-renames", "--format=", "HEAD").split()
    assert committed == ["history.csv"]  # alpha's record is unchanged: only its history row is new
    assert porcelain(repo) == ""


@pytest.mark.slow
def test_sweeping_the_server_whose_record_is_broken_replaces_it(repo):
    path = repo / "results/bravo/measurement.json"
    path.write_text("{not json")
    _commit_by_hand(repo)
    code, _, err = sweep(repo, "--all", "--commit", "--date", D2, *HOST)
    assert code == 0 and "problem:" not in err, err
    assert records(repo)["bravo"]["status"] == "measured" and porcelain(repo) == ""


@pytest.mark.parametrize("header", ["day,server,tokens,toolCount,status,isolation", "", "\xff\xfe"])
def test_a_history_file_that_cannot_take_a_row_stops_the_sweep_before_measuring(tmp_path, repo, header):
    launches = tmp_path / "launches"
    commit_catalog(repo, catalog_text([("alpha", well_behaved(3)), ("bravo", well_behaved(4)),
                                       ("counter", fixture("changes_between_launches", "--state", str(launches)))]))
    rows = (repo / "history.csv").read_bytes().split(b"\n", 1)[1]
    (repo / "history.csv").write_bytes(header.encode("latin-1") + b"\n" + rows if header else b"\xff" + rows)
    _commit_by_hand(repo)
    tree = working_files(repo)

    code, _, err = sweep(repo, "--all", "--commit", *HOST)

    assert code == 2, err
    assert "history.csv" in err and "nothing was measured" in err and "Traceback" not in err
    assert not launches.exists() and working_files(repo) == tree


# --------------------------------------------------------------------------------------------
# The guard judges history rows too


@pytest.mark.slow
def test_a_back_dated_sweep_of_failures_is_a_harness_fault(tmp_path):
    names = [f"s{i}" for i in range(6)]
    root = init_repo(tmp_path / "repo", catalog_text([(n, well_behaved(2 + i)) for i, n in enumerate(names)]))
    assert sweep(root, "--all", "--commit", "--date", D2, *HOST)[0] == 0
    commit_catalog(root, catalog_text([(n, FAIL_COMMAND) for n in names]), "every command now fails (a broken machine)")
    before, tree, rows = head(root), working_files(root), history_rows(root)

    code, out, err = sweep(root, "--all", "--commit", "--date", D1, *HOST)  # dated before what is published

    assert code == 1, err
    assert "harness fault: 6 of 6" in err and "nothing was published" in err
    assert head(root) == before and working_files(root) == tree and history_rows(root) == rows
    assert out == ""


@pytest.mark.slow
def test_a_back_dated_sweep_that_passes_adds_only_history_rows(tmp_path):
    names = [f"s{i}" for i in range(6)]
    entries = [(n, well_behaved(2 + i)) for i, n in enumerate(names)]
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    assert sweep(root, "--all", "--commit", "--date", D2, *HOST)[0] == 0
    commit_catalog(root, catalog_text([(n, FAIL_COMMAND if n == "s0" else c) for n, c in entries]))
    published = records(root)

    code, _, err = sweep(root, "--all", "--commit", "--date", D1, *HOST)

    assert code == 0 and "harness-fault check passed: 1 of 6" in err, err
    assert records(root) == published  # the newer records stay
    rows = {(r["date"], r["server"]): r for r in history_rows(root)}
    assert rows[(D1, "s0")]["status"] == "startup-failure" and rows[(D2, "s0")]["status"] == "measured"
    committed = git(root, "show", "--name-only", "--no-renames", "--format=", "HEAD").split()
    assert "history.csv" in committed and not [p for p in committed if p.startswith(("results/s", "badges/"))]
