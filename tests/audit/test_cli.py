"""The ``audit`` command with fixture servers: exit codes, bad input checked before any server
starts, ``--flag=value`` ≡ ``--flag value``, baseline gates, the three output forms, untrusted
text escaped, nothing written into the working directory unless asked."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from tests.audit.conftest import approve_project, report_of, run_audit
from tests.conftest import FIXTURE_SERVERS

WELL = [sys.executable, str(FIXTURE_SERVERS / "well_behaved.py")]


@pytest.fixture
def project(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    approve_project(home, project)
    return home, project


def write_mcp(project, servers: dict):
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def stdio(argv: list[str], **extra) -> dict:
    return {"command": argv[0], "args": argv[1:], **extra}


def marker_server(path) -> dict:
    """A command that leaves ``path`` behind if it is ever launched."""
    return stdio([sys.executable, "-c", f"open({str(path)!r}, 'w').close()"])


@pytest.mark.parametrize("args, words", [
    (["--baseline", "BASELINE"], "not JSON"),
    (["--budget", "12x"], "whole number"),
    (["--budget=-1"], "whole number"),
    (["--context", "0"], "a whole number from 1 to"),
    (["--max-increase", "10%"], "needs --baseline"),
    (["--baseline", "BASELINE", "--max-increase", "ten"], "tokens (e.g. 500)"),
    (["--no-such-flag"], "unrecognized arguments"),
    (["--config", "missing.json"], "no such file"),
    (["--json", "--markdown"], "cannot both go to stdout"),
    (["--timeout", "0"], "seconds between 1 and 600"),
])
def test_bad_input_exits_2_before_any_server_starts(project, tmp_path, args, words):
    home, cwd = project
    marker = tmp_path / "launched"
    write_mcp(cwd, {"spy": marker_server(marker)})
    (tmp_path / "bad-baseline.json").write_text("{not json")
    args = [str(tmp_path / "bad-baseline.json") if a == "BASELINE" else a for a in args]
    done = run_audit(args, cwd, home)
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr and done.stdout == ""
    assert not marker.exists()


def test_a_baseline_that_is_json_but_not_a_report_exits_2(project, tmp_path):
    home, cwd = project
    marker = tmp_path / "launched"
    write_mcp(cwd, {"spy": marker_server(marker)})
    (tmp_path / "b.json").write_text('{"configs": []}')
    done = run_audit(["--baseline", str(tmp_path / "b.json")], cwd, home)
    assert done.returncode == 2 and "not an audit report" in done.stderr and not marker.exists()


@pytest.mark.slow
def test_nothing_found_or_nothing_measured_exits_1(project):
    home, cwd = project
    done = run_audit(["--json"], cwd, home)
    assert done.returncode == 1
    assert report_of(done.stdout)["summary"]["measuredServers"] == 0
    write_mcp(cwd, {"ghost": stdio(["definitely-not-an-installed-mcp-server-xyz"])})
    done = run_audit(["--json", "--single"], cwd, home)
    report = report_of(done.stdout)
    assert done.returncode == 1 and report["configs"][0]["servers"][0]["status"] == "startup-failure"


@pytest.mark.slow
def test_the_text_report_says_why_nothing_was_measured_and_what_to_do(project):
    """Exit 1 with nothing measured ends with a line that says why and what to type next; an empty
    "Records" heading is not printed (a newcomer's first run on a machine without configs)."""
    home, cwd = project
    done = run_audit([], cwd, home)
    assert done.returncode == 1
    closing = " ".join(done.stdout.split()).rsplit("nothing measured (exit 1): ", 1)[-1]
    assert closing.startswith("no MCP client config was found") and closing.endswith("--config PATH (and --no-discover in CI)")
    assert "Records (what each vendor states" not in done.stdout
    write_mcp(cwd, {"ghost": stdio(["definitely-not-an-installed-mcp-server-xyz"])})
    done = run_audit(["--single"], cwd, home)
    assert done.returncode == 1
    assert " ".join(done.stdout.split()).rsplit("nothing measured (exit 1): ", 1)[-1].startswith("no server in the 1 config")


@pytest.mark.slow
@pytest.mark.parametrize("spelling", [["--budget=1"], ["--budget", "1"]])
def test_budget_spellings_behave_the_same(project, spelling):
    home, cwd = project
    write_mcp(cwd, {"well": stdio(WELL)})
    done = run_audit(spelling + ["--json", "--single"], cwd, home)
    report = report_of(done.stdout)
    assert done.returncode == 1
    [gate] = report["gates"]
    assert gate["gate"] == "budget" and not gate["passed"] and "over the budget of 1" in gate["reasons"][0]
    passing = run_audit(["--budget=100000", "--json", "--single"], cwd, home)
    assert passing.returncode == 0 and report_of(passing.stdout)["gates"][0]["passed"]


@pytest.mark.slow
def test_baseline_gate_paired_by_path(project, tmp_path):
    home, cwd = project
    write_mcp(cwd, {"well": stdio(WELL)})
    base = tmp_path / "base.json"
    first = run_audit(["--json", str(base), "--single"], cwd, home)
    assert first.returncode == 0, first.stderr
    report_of(base.read_text())
    same = run_audit(["--baseline", str(base), "--max-increase", "0", "--json", "--single"], cwd, home)
    assert same.returncode == 0, same.stdout
    write_mcp(cwd, {"well": stdio(WELL + ["--tools", "6"])})
    grown = run_audit(["--baseline", str(base), "--max-increase=5%", "--json", "--single"], cwd, home)
    gate = report_of(grown.stdout)["gates"][0]
    assert grown.returncode == 1 and "max-increase 5% allows at most" in gate["reasons"][0]
    write_mcp(cwd, {"well": stdio(WELL), "ghost": stdio(["definitely-not-an-installed-mcp-server-xyz"])})
    added = run_audit(["--baseline", str(base), "--max-increase", "100000", "--json", "--single"], cwd, home)
    gate = report_of(added.stdout)["gates"][0]
    assert added.returncode == 1 and "added server(s) that cannot be measured: ghost (startup-failure)" in gate["reasons"][0]
    (cwd / ".mcp.json").unlink()
    (cwd / "other.json").write_text(json.dumps({"mcpServers": {"well": stdio(WELL)}}))
    dropped = run_audit(["--config", "other.json", "--baseline", str(base), "--json", "--single"], cwd, home)
    reasons = report_of(dropped.stdout)["gates"][0]["reasons"]
    assert dropped.returncode == 1 and any("dropped config" in r for r in reasons)


@pytest.mark.slow
def test_methodology_change_fails_the_baseline_gate(project, tmp_path):
    home, cwd = project
    write_mcp(cwd, {"well": stdio(WELL)})
    base = tmp_path / "base.json"
    run_audit(["--json", str(base), "--single"], cwd, home)
    document = json.loads(base.read_text())
    document["encoding"] = "cl100k_base"
    base.write_text(json.dumps(document))
    done = run_audit(["--baseline", str(base), "--json", "--single"], cwd, home)
    assert done.returncode == 1 and "encoding changed" in report_of(done.stdout)["gates"][0]["reasons"][0]


@pytest.mark.slow
def test_outputs_and_nothing_written_unless_asked(project, tmp_path):
    home, cwd = project
    write_mcp(cwd, {"well": stdio(WELL)})
    before = sorted(p.name for p in cwd.iterdir())
    text = run_audit(["--single"], cwd, home)
    assert text.returncode == 0 and "Config .mcp.json" in text.stdout
    assert all(len(line) <= 100 for line in text.stdout.splitlines())
    assert "distinct server(s) to measure" in text.stderr and "[1/1] well: measured" in text.stderr
    markdown = run_audit(["--markdown", "--single"], cwd, home)
    assert markdown.stdout.startswith("## MCP context cost") and "| well |" in markdown.stdout
    assert sorted(p.name for p in cwd.iterdir()) == before  # nothing written into the cwd
    out = tmp_path / "out" / "audit.json"
    run_audit(["--json", str(out), "--markdown", str(tmp_path / "audit.md"), "--single"], cwd, home)
    report_of(out.read_text())
    assert (tmp_path / "audit.md").read_text().startswith("## MCP context cost")


@pytest.mark.slow
def test_untrusted_names_and_server_text_are_escaped(project):
    home, cwd = project
    name = "evil\n::error title=x::pwned\x1b]0;title\x07\u202e"
    write_mcp(cwd, {name: stdio(["definitely-not-an-installed-mcp-server-xyz"])})
    for args in ([], ["--markdown"]):
        done = run_audit(args + ["--single"], cwd, home)
        for stream in (done.stdout, done.stderr):
            assert "\x1b" not in stream and "\u202e" not in stream and "\x07" not in stream
            assert not any(line.lstrip().startswith("::") for line in stream.splitlines())
    done = run_audit(["--json", "--single"], cwd, home)
    assert report_of(done.stdout)["configs"][0]["servers"][0]["name"] == name  # JSON keeps it, escaped by JSON


@pytest.mark.slow
def test_declared_secret_reaches_the_server_and_no_output(project, tmp_path):
    home, cwd = project
    sentinel = "sk-audit-SENTINEL-7c1e4f2a9b3d5e6f"
    write_mcp(cwd, {"echo": stdio(WELL + ["--describe-env", "AUDIT_KEY"], env={"AUDIT_KEY": "${AUDIT_SRC}"})})
    out = tmp_path / "r.json"
    done = run_audit(["--json", str(out), "--markdown", str(tmp_path / "r.md"), "--single"], cwd, home,
                     env={"AUDIT_SRC": sentinel})
    report = report_of(out.read_text())
    server = report["configs"][0]["servers"][0]
    assert server["status"] == "measured" and server["envNames"] == ["AUDIT_KEY"]
    assert any("redacted before counting" in n for n in server["notes"])  # it arrived, and was redacted
    for text in (done.stdout, done.stderr, out.read_text(), (tmp_path / "r.md").read_text()):
        assert sentinel not in text and sentinel[8:24] not in text
    assert "${AUDIT_SRC}" not in json.dumps(server["unevaluated"])  # it was in hand, so it was evaluated
    assert shlex.join(WELL) in server["launch"]
