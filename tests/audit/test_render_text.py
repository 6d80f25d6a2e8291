"""The audit's text report for people: who pays what per session first, then servers, then
details; laid out at the terminal's width (``COLUMNS``) without ever splitting a word — a package
name, a path or a URL stands whole; the live screen of servers still running (on a terminal
only); the budget sentence of a floor already over the budget. Real audits of fixture servers
serving this repository's published captures."""

from __future__ import annotations

import io
import re
import json
import sys

import pytest

from harness.audit import render_text
from tests.audit.conftest import approve_project, report_of, run_audit
from tests.conftest import FIXTURE_SERVERS, REPO

# Path segments of words only: a segment of 20+ characters mixing letters and digits reads as a
# token, and the URL printer masks it (harness.util.urls).
LONG_URL = "http://127.0.0.1:9/" + "/".join(f"segment-{n}-of-a-long-endpoint-path"
                                            for n in ("one", "two", "three", "four")) + "/mcp"
LONG_PACKAGE = "@an-organisation-with-a-long-name/mcp-server-for-something-quite-specific-indeed"


def _serving(name: str) -> dict:
    capture = json.loads((REPO / "results" / name / "measurement.json").read_text(encoding="utf-8"))["rawToolsCapture"]
    return {"command": sys.executable, "args": [str(FIXTURE_SERVERS / "tool_list.py"), "--tools-json",
                                                json.dumps(capture)]}


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    root = tmp_path_factory.mktemp("machine")
    (root / "home" / ".config" / "Claude").mkdir(parents=True)
    (root / "project").mkdir()
    (root / "project" / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "filesystem": _serving("filesystem"), "remote": {"type": "http", "url": LONG_URL},
        "long-package": {"command": sys.executable, "args": [str(FIXTURE_SERVERS / "tool_list.py"), "--fail",
                                                             LONG_PACKAGE]}}}))
    (root / "home" / ".config" / "Claude" / "claude_desktop_config.json").write_text(json.dumps({"mcpServers": {
        "memory": _serving("memory"), "fetch": _serving("fetch")}}))
    approve_project(root / "home", root / "project")  # the project's servers are the user's own
    return root


@pytest.fixture(scope="module")
def report(machine) -> dict:
    done = run_audit(["--single", "--json", "--budget", "10", "--timeout", "10"], machine / "project", machine / "home")
    return report_of(done.stdout)


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


@pytest.mark.slow
def test_who_pays_what_comes_first_one_line_per_session(report):
    text = render_text.render(report, columns=100)
    lines = _lines(text)
    assert lines[3] == "Who pays what"
    memory, fetch = (json.loads((REPO / "results" / n / "measurement.json").read_text())["totalTokens"]
                     for n in ("memory", "fetch"))
    section = text.split("Who pays what\n", 1)[1].split("\n\n", 1)[0]
    sessions = [" ".join(s.split()) for s in re.split(r"\n  (?=\S)", "\n" + section) if s.strip()]  # one each
    assert len(sessions) == 2
    desktop = next(s for s in sessions if s.startswith("Claude Desktop"))
    assert f"{memory + fetch:,} tokens" in desktop and "up front and in every request" in desktop
    code = next(s for s in sessions if s.startswith("Claude Code"))
    assert "up front, tool names only (definitions deferred)" in code and "every request's tools array carries ≥" in code
    order = [text.index(h) for h in ("Who pays what", "\nServers\n", "\nDetails\n", "\nConfig ")]
    assert order == sorted(order)


@pytest.mark.slow
@pytest.mark.parametrize("columns", (60, 80, 132))
def test_follows_the_width_and_never_splits_a_word(report, columns):
    text = render_text.render(report, columns=columns)
    for line in _lines(text):
        # a line is longer than the width only when it is one word that cannot be broken
        assert len(line) <= columns or len(line.split()) <= 2, (columns, line)
    assert LONG_URL in text and LONG_PACKAGE in text  # whole, on one line
    assert max(len(line) for line in _lines(text)) > 40


@pytest.mark.slow
def test_columns_is_read_from_the_environment(machine):
    done = run_audit(["--single", "--timeout", "10"], machine / "project", machine / "home", env={"COLUMNS": "64"})
    lines = _lines(done.stdout)
    assert all(len(line) <= 64 or len(line.split()) <= 2 for line in lines), [line for line in lines if len(line) > 64]
    assert any(len(line) > 56 for line in lines)  # it used the width it was given
    assert "still running" not in done.stderr  # stderr is no terminal here: one line per finished server
    assert "[1/4]" in done.stderr or "[1/" in done.stderr


@pytest.mark.slow
def test_a_floor_already_over_the_budget_says_it_is_over(report):
    gate = next(g for g in report["gates"] if g["gate"] == "budget")
    code = next(r for r in gate["reasons"] if r.startswith("Claude Code"))
    assert "is over the budget of 10 by at least" in code and "could be over" not in code
    text = render_text.render(report, columns=100)
    assert "is over the budget of 10 by at least" in " ".join(text.split())


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_screen_names_what_still_runs_and_the_budget():
    screen = render_text.Running(3, 45.0, stream=_Terminal())
    screen.started("filesystem")
    screen.started("memory")
    screen.ended("filesystem")
    status = screen._status().plain
    assert status.startswith("measuring 1/3 done; still running: memory (") and "budget 45 s per server" in status
    plain = render_text.Running(3, 45.0, stream=io.StringIO())
    assert plain.live is None  # not a terminal: no live line, only the finished lines
    plain.line("[1/3] memory: measured — 2,378 tokens")
    assert plain.console.file.getvalue() == "[1/3] memory: measured — 2,378 tokens\n"
