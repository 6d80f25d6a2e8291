"""``audit`` end to end: a config holding two real pinned servers (the exact versions the
probe's real-server tests use), a remote fixture on 127.0.0.1 answering 401, and a command that
does not exist — discovered under a temporary HOME and cwd, measured, reported and gated. Totals,
floors, shares and exit codes are asserted; a sentinel env value, handed to a real server through
``${VAR}`` expansion, appears in no output and no file."""

from __future__ import annotations

import json

import pytest

from harness.core.jsparse import parse
from tests.audit.conftest import approve_project, report_of, run_audit
from tests.conftest import shared_dir
from tests.probe.helpers import HttpFixture
from tests.probe.test_real_servers import REAL

pytestmark = pytest.mark.slow

SENTINEL = "sk-live-AUDIT-SENTINEL-0b7d2c9e4f1a"
TIME_PUBLISHED = "time__7c6ff0884062.json"


def argv(name: str) -> list[str]:
    import shlex

    return shlex.split(REAL[name][0])


@pytest.fixture(scope="module")
def wall(tmp_path_factory):
    server = HttpFixture("http_auth_wall.py", tmp_path_factory.mktemp("wall") / "stderr.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def stack(tmp_path_factory, wall):
    """Run the audit once over the whole stack with ``--budget=1``; keep everything it produced."""
    root = tmp_path_factory.mktemp("stack")
    home, project = root / "home", root / "project"
    home.mkdir()
    project.mkdir()
    memory, time = argv("memory"), argv("time")
    servers = {
        "memory": {"command": memory[0], "args": memory[1:], "env": {"MEMORY_TOKEN": "${AUDIT_SENTINEL_SOURCE}"}},
        "time": {"command": time[0], "args": time[1:]},
        "walled": {"type": "http", "url": wall.url, "headers": {"Authorization": "Bearer ${AUDIT_SENTINEL_SOURCE}"}},
        "ghost": {"command": "definitely-not-an-installed-mcp-server-xyz", "args": ["--stdio"]},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    approve_project(home, project)  # as the user did in Claude Code's dialog
    out, md = root / "audit.json", root / "audit.md"
    done = run_audit(["--budget=1", "--json", str(out), "--markdown", str(md), "--timeout", "120"], project, home,
                     env={"AUDIT_SENTINEL_SOURCE": SENTINEL})
    return {"done": done, "report": report_of(out.read_text()), "texts": [done.stdout, done.stderr, out.read_text(),
                                                                            md.read_text()], "project": project}


def servers(report: dict) -> dict:
    return {s["name"]: s for s in report["configs"][0]["servers"]}


def test_real_servers_measure_and_the_others_are_named(stack, wall):
    rows = servers(stack["report"])
    assert rows["memory"]["status"] == "measured" and rows["memory"]["tokens"] > 0
    assert rows["time"]["status"] == "measured"
    expected = parse((shared_dir("conformance", "published") / TIME_PUBLISHED).read_text())["expected"]
    assert rows["time"]["tokens"] == expected["totalTokens"]  # the same number the sweep publishes
    assert rows["walled"]["status"] == "remote-auth-wall"
    assert any("HTTP 401" in n and "WWW-Authenticate: Bearer resource_metadata=" in n and wall.url in n
               for n in rows["walled"]["notes"])
    assert rows["ghost"]["status"] not in ("measured", "dynamic") and rows["ghost"]["tokens"] is None
    assert rows["walled"]["headerNames"] == ["Authorization"]


def test_totals_are_floors_and_shares_are_of_the_window(stack):
    report = stack["report"]
    rows = servers(report)
    total = report["configs"][0]["total"]
    exact = rows["memory"]["tokens"] + rows["time"]["tokens"]
    assert total["tokens"] == exact and total["floor"] is True and total["display"] == f"≥ {exact:,}"
    assert sorted(total["unmeasured"]) == ["ghost", "walled"]
    assert total["share"] == round(exact / 200_000, 6)
    assert rows["time"]["share"] == round(rows["time"]["tokens"] / 200_000, 6)
    session = report["sessions"][0]
    assert session["client"] == "claude-code" and session["total"] == total
    assert session["deferral"]["posture"]["posture"] == "deferred"


def test_budget_fails_on_the_real_stack_and_the_exit_code_says_so(stack):
    assert stack["done"].returncode == 1
    [gate] = stack["report"]["gates"]
    reason = gate["reasons"][0]
    floor = stack["report"]["sessions"][0]["total"]["display"]
    # A floor already over the budget says so, and names what it could not count.
    assert not gate["passed"] and floor.startswith("≥ ") and f"{floor} tokens is over the budget of 1 by at least" in reason
    assert "before counting walled, ghost (no number)" in reason
    assert stack["report"]["exitCode"] == 1


def test_the_sentinel_reached_servers_and_no_output(stack, wall):
    assert "Authorization" in wall.log.read_text()  # the header was sent (its value is never logged)
    for text in stack["texts"]:
        assert SENTINEL not in text and SENTINEL[8:28] not in text
    assert sorted(p.name for p in stack["project"].iterdir()) == [".mcp.json"]


def test_budget_space_spelling_on_a_real_server(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    time = argv("time")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": time[0], "args": time[1:]}}}))
    approve_project(home, project)
    done = run_audit(["--budget", "1", "--json", "--single", "--timeout", "120"], project, home)
    report = report_of(done.stdout)
    assert done.returncode == 1 and "over the budget of 1 by" in report["gates"][0]["reasons"][0]
    assert report["configs"][0]["total"]["floor"] is False
