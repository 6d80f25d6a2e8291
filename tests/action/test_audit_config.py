"""The Action's ``config:`` input: the audit runs with the same gates and writes its
Markdown report to the job summary; a base-branch report made in another checkout pairs with it."""

from __future__ import annotations

import json
import shlex

import pytest

from tests.conftest import fixture_command


def write_config(folder, tools: int = 2, extra: dict | None = None) -> None:
    argv = shlex.split(fixture_command("well_behaved", "--tools", str(tools)))
    servers = {"well": {"command": argv[0], "args": argv[1:]}, **(extra or {})}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_config_input_with_a_baseline_that_does_not_parse_is_an_error(run_action, tmp_path):
    write_config(tmp_path / "workspace")
    (tmp_path / "workspace" / "base.json").write_text("{nope")
    run = run_action({"config": ".mcp.json", "baseline": "base.json"})
    assert run.code == 1 and run.outputs["status"] == "error"
    assert "could not run" in run.summary and any("not JSON" in line for line in run.errors())


def test_config_and_command_together_are_invalid(run_action):
    run = run_action({"config": ".mcp.json", "command": "x"})
    assert run.code == 1 and any("either 'config'" in line for line in run.errors())


@pytest.mark.slow
def test_config_input_shows_changed_and_suggest_and_fails_when_a_check_cannot_be_made(run_action, tmp_path):
    # The Action's config audit can join to the capture index and place tools in the tool
    # shape; the job summary shows both; a published file that cannot be read fails the step by name.
    from harness.pages import tool_shape
    from tests.audit import published_fixtures as fx

    workspace = tmp_path / "workspace"
    (workspace / "pub").mkdir(parents=True)
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"gh": fx.stdio(fx.OLD), "wordy": fx.stdio(fx.WORDY)}}))
    (workspace / "pub" / "capture-index.json").write_text(json.dumps(fx.index()))
    (workspace / "pub" / "tool-shape.json").write_text(tool_shape.render(fx.shape()))
    run = run_action({"config": ".mcp.json", "changed": "true", "index": "pub/capture-index.json",
                      "tool-shape": "pub/tool-shape.json"})
    assert run.code == 0 and run.outputs["status"] == "audited", run.stdout + run.stderr
    assert "### Changed since published" in run.summary and "| gh (published as github) | behind |" in run.summary
    assert "| at\\_p90 | " in run.summary and "- at\\_p90: description 90 tokens, at p90" in run.summary
    report = json.loads((run.workspace / run.outputs["audit-report-path"]).read_text())
    assert report["changed"]["source"] == str(workspace / "pub" / "capture-index.json")
    missing = run_action({"config": ".mcp.json", "suggest": "true", "tool-shape": "pub/none.json"})
    assert missing.code == 1 and missing.outputs["status"] == "error"
    assert any("input 'tool-shape' names a file that does not exist" in line for line in missing.errors())
    (workspace / "pub" / "not-a-shape.json").write_text("[1, 2]")
    failed = run_action({"config": ".mcp.json", "suggest": "true", "tool-shape": "pub/not-a-shape.json"})
    assert failed.code == 1 and failed.outputs["status"] == "failed"
    assert any("audit gate failed (suggest)" in line and "tool-shape baseline could not be read" in line
               for line in failed.errors())
    assert "**Problem:** tool-shape baseline could not be read" in failed.summary


def test_changed_and_suggest_inputs_are_checked(run_action):
    bad = run_action({"config": ".mcp.json", "changed": "yes"})
    assert bad.code == 1 and any("input 'changed' must be true or false" in line for line in bad.errors())
    alone = run_action({"command": "x", "suggest": "true"})
    assert alone.code == 1 and any("apply to a 'config' audit only" in line for line in alone.errors())
