"""The Action's ``config:`` input (issue #12): the audit runs with the same gates and writes its
Markdown report to the job summary; a base-branch report made in another checkout pairs with it."""

from __future__ import annotations

import json
import shlex

from tests.conftest import fixture_command


def write_config(folder, tools: int = 2, extra: dict | None = None) -> None:
    argv = shlex.split(fixture_command("well_behaved", "--tools", str(tools)))
    servers = {"well": {"command": argv[0], "args": argv[1:]}, **(extra or {})}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_config_input_audits_and_writes_the_summary(run_action, tmp_path):
    write_config(tmp_path / "workspace")  # the run_action fixture's workspace
    run = run_action({"config": ".mcp.json", "budget": "100000", "timeout": "30"})
    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["status"] == "audited" and int(run.outputs["tokens"]) > 0
    assert run.outputs["audit-report-path"] == ".mcp-context-cost/audit.json"
    report = json.loads((run.workspace / run.outputs["audit-report-path"]).read_text())
    assert report["configs"][0]["path"] == ".mcp.json" and report["gates"][0]["passed"]
    assert run.summary.startswith("## MCP context cost") and "| well |" in run.summary
    assert run.errors() == []


def test_config_input_fails_closed_on_budget_and_on_an_added_broken_server(run_action, tmp_path):
    write_config(tmp_path / "workspace")
    run = run_action({"config": ".mcp.json", "budget": "1"})
    assert run.code == 1 and run.outputs["status"] == "failed"
    assert any("audit gate failed (budget)" in line for line in run.errors())
    base = run.workspace / "base.json"
    base.write_text((run.workspace / ".mcp-context-cost" / "audit.json").read_text())
    broken = {"ghost": {"command": "definitely-not-an-installed-mcp-server-xyz"}}
    write_config(run.workspace, extra=broken)
    again = run_action({"config": ".mcp.json", "baseline": "base.json", "max-increase": "10%"})
    assert again.code == 1 and any("cannot be measured: ghost" in line for line in again.errors())


def test_config_input_with_a_baseline_that_does_not_parse_is_an_error(run_action, tmp_path):
    write_config(tmp_path / "workspace")
    (tmp_path / "workspace" / "base.json").write_text("{nope")
    run = run_action({"config": ".mcp.json", "baseline": "base.json"})
    assert run.code == 1 and run.outputs["status"] == "error"
    assert "could not run" in run.summary and any("not JSON" in line for line in run.errors())


def test_config_and_command_together_are_invalid(run_action):
    run = run_action({"config": ".mcp.json", "command": "x"})
    assert run.code == 1 and any("either 'config'" in line for line in run.errors())
