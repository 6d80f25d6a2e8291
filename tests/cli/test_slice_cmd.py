"""The ``slice`` subcommand (harness/cli/slice_cmd.py)."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import slice_cmd
from harness.db.catalog import load_catalog
from harness.db.rotation import slice_for

REPO = Path(__file__).resolve().parents[2]
CATALOG = REPO / "servers.yaml"


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="mcp-context-cost")
    slice_cmd.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["slice", *argv])
    return args.func(args)


@pytest.mark.slow
def test_fixed_date_text_output(capsys):
    assert run("--date", "2026-12-09", "--catalog", str(CATALOG)) == 0
    out = capsys.readouterr().out.splitlines()
    expected = [e.name for e in slice_for(load_catalog(CATALOG), dt.date(2026, 12, 9))]
    assert out[0] == f"# 2026-W50: week 2 of 3, {len(expected)} servers, reference memory included"
    assert out[1:] == expected
    assert "memory" in out[1:]


@pytest.mark.slow
def test_fixed_date_json_output(capsys):
    assert run("--date", "2026-11-30", "--catalog", str(CATALOG), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["week"] == "2026-W49" and doc["position"] == 0 and doc["cycleWeeks"] == 3
    assert doc["reference"] == "memory" and "memory" in doc["servers"]
    assert doc["servers"] == [e.name for e in slice_for(load_catalog(CATALOG), dt.date(2026, 11, 30))]


def test_tiny_catalog_exact_output(tmp_path, capsys):
    path = tmp_path / "servers.yaml"
    path.write_text("reference: ref\ncycleWeeks: 1\nservers:\n"
                    "  - name: ref\n    command: npx ref\n  - name: other\n    url: https://o.example/mcp\n")
    assert run("--date", "2026-11-30", "--catalog", str(path)) == 0
    assert capsys.readouterr().out == (
        "# 2026-W49: week 1 of 1, 2 servers, reference ref included\nref\nother\n")


def test_bad_catalog_exits_2_with_message_on_stderr(tmp_path, capsys):
    path = tmp_path / "servers.yaml"
    path.write_text("servers:\n  - name: x\n")
    assert run("--catalog", str(path)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert 'entry #1 (name: "x"): missing both "command" and "url"' in captured.err
    assert "Traceback" not in captured.err


def test_bad_date_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        run("--date", "2026-02-30")
    assert info.value.code == 2
    assert "expected a date as YYYY-MM-DD" in capsys.readouterr().err


def test_python_dash_m(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli.slice_cmd", "--date", "2026-12-16", "--catalog", str(CATALOG)],
        capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# 2026-W51: week 3 of 3, ")
