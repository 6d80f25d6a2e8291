"""``mcp-context-cost regen`` (harness/cli/regen_cmd.py): exit codes, nothing written on bad input."""

from __future__ import annotations

import argparse

from harness.cli import regen_cmd
from tests.pages import builders as b
from tests.pages import scenario


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="mcp-context-cost")
    regen_cmd.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["regen", *argv])
    return args.func(args)


def test_regen_writes_and_reports(tmp_path, capsys):
    scenario.build(tmp_path)
    assert run("--root", str(tmp_path)) == 0
    assert "56 published files" in capsys.readouterr().out  # 8 + per entry: page (.md, .html), sparkline, trend, tool vectors
    assert (tmp_path / "docs/index.html").is_file() and (tmp_path / "results/leaderboard.csv").is_file()


def test_bad_record_writes_nothing(tmp_path, capsys):
    scenario.build(tmp_path)
    assert run("--root", str(tmp_path)) == 0
    before = (tmp_path / "results/leaderboard.md").read_bytes()
    (tmp_path / "results/alpha/measurement.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "results/bravo/measurement.json").write_text('{"server": "other", "status": "measured"}', encoding="utf-8")
    assert run("--root", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "nothing written" in err and "alpha/measurement.json: not JSON" in err
    assert "bravo/measurement.json: server is 'other', expected 'bravo'" in err
    assert (tmp_path / "results/leaderboard.md").read_bytes() == before


def test_bad_catalog_and_bad_history(tmp_path, capsys):
    (tmp_path / "servers.yaml").write_text("servers:\n  - name: Bad Name\n", encoding="utf-8")
    assert run("--root", str(tmp_path)) == 2
    assert "servers.yaml" in capsys.readouterr().err
    b.write_catalog(tmp_path, [b.entry("ok")])
    b.write_history(tmp_path, ["2026-11-30,ok,12,1,measured,vm"])
    assert run("--root", str(tmp_path)) == 2
    assert "history.csv:2: isolation must be" in capsys.readouterr().err
    assert not (tmp_path / "docs").exists() and not (tmp_path / "results").exists()
