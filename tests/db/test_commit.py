"""The bot commit holds the published files and nothing the user staged; --commit needs a repo."""

from __future__ import annotations

import git
import pytest

from harness.cli import main
from harness.db.commit import BOT, commit_published
from tests.conftest import FIXTURE_SERVERS


def test_bot_commit_leaves_the_users_staged_work_alone(tmp_path):
    repo = git.Repo.init(tmp_path)
    (tmp_path / "README.md").write_text("readme\n")
    repo.index.add(["README.md"])
    repo.index.commit("init", author=git.Actor("u", "u@u"), committer=git.Actor("u", "u@u"))
    (tmp_path / "README.md").write_text("readme\nmy local note\n")
    repo.git.add("README.md")  # the user's own staged change
    (tmp_path / "badges").mkdir()
    (tmp_path / "badges" / "x.json").write_text("{}\n")

    sha = commit_published(tmp_path, "sweep: 1 server")
    commit = repo.commit(sha)
    assert sorted(commit.stats.files) == ["badges/x.json"]
    assert commit.author.name == BOT.name and commit.committer.email == BOT.email
    assert repo.git.diff("--cached", "--name-only") == "README.md"  # still staged, not committed
    assert commit_published(tmp_path, "again") is None  # nothing changed: no commit


def test_commit_outside_a_repository_is_refused_before_measuring(tmp_path, capsys):
    (tmp_path / "servers.yaml").write_text(
        f"servers:\n- name: one\n  command: python3 {FIXTURE_SERVERS / 'well_behaved.py'}\n")
    code = main(["sweep", "--root", str(tmp_path), "--all", "--commit", "--isolation", "host"])
    assert code == 2
    assert "is not a git repository" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_a_sweep_dated_in_the_past_keeps_the_newer_record_and_adds_history(tmp_path):
    from harness.core.jsparse import parse

    repo = git.Repo.init(tmp_path)
    (tmp_path / "servers.yaml").write_text(
        f"servers:\n- name: one\n  command: python3 {FIXTURE_SERVERS / 'well_behaved.py'} --tools 2\n")
    repo.index.add(["servers.yaml"])
    repo.index.commit("catalog", author=git.Actor("u", "u@u"), committer=git.Actor("u", "u@u"))
    common = ["--root", str(tmp_path), "--all", "--isolation", "host", "--commit"]
    assert main(["sweep", "--date", "2026-11-30", *common]) == 0
    record = tmp_path / "results" / "one" / "measurement.json"
    newer = record.read_text()
    assert main(["sweep", "--date", "2026-11-23", *common]) == 0
    assert record.read_text() == newer  # the newer measurement is not replaced by a back-dated one
    assert parse(newer)["measuredAt"].startswith("2026-11-30")
    rows = (tmp_path / "history.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["2026-11-23", "2026-11-30"]
