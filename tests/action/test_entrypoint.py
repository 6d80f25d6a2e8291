"""``entrypoint.py`` as the runner calls it, against fixture servers (fast) and a real npm server."""

from __future__ import annotations

import copy
import json

import pytest

from harness.core.counting import count_tools
from harness.probe.build_record import serialize
from harness.util import schemas
from tests.conftest import fixture_command

OUTPUT_NAMES = {"tokens", "tool-count", "status", "canonical-sha256", "measurement-path", "badge-path", "delta",
                "audit-report-path", "base-total", "head-total"}
MEMORY = "npx -y @modelcontextprotocol/server-memory@2026.8.31"


def derived_baseline(record: dict, drop: str, shorten: str, add: tuple[dict, ...] = ()) -> dict:
    """A valid measured record built from ``record``: tool ``drop`` removed, tool ``shorten``'s
    description cut to one word and the raw tools ``add`` appended, every number recomputed from
    the edited capture."""
    baseline = copy.deepcopy(record)
    tools = [t for t in baseline["rawToolsCapture"] if t["name"] != drop]
    assert len(tools) == len(record["rawToolsCapture"]) - 1, f"no tool named {drop!r}"
    edited = next(t for t in tools if t["name"] == shorten)
    edited["description"] = "Short."
    tools += copy.deepcopy(list(add))
    counts = count_tools(tools).to_json()
    baseline |= {k: counts[k] for k in ("totalTokens", "toolCount", "canonicalSha256", "canonicalLength")}
    baseline["tools"] = [{k: v for k, v in t.items() if k != "divergence"} for t in counts["tools"]]
    baseline["rawToolsCapture"] = tools
    schemas.check("measurement", baseline)
    return baseline


def write_json(path, doc) -> str:
    path.write_text(serialize(doc) if isinstance(doc, dict) and "rawToolsCapture" in doc else json.dumps(doc))
    return path.name


@pytest.mark.slow
def test_measures_and_writes_outputs_summary_record_and_badge(run_action):
    run = run_action({"command": fixture_command("well_behaved", "--tools", "4"), "name": "demo", "budget": "5000"})
    assert run.code == 0, run.stdout + run.stderr
    assert set(run.outputs) == OUTPUT_NAMES
    rec = run.record()
    assert run.outputs["status"] == rec["status"] == "measured"
    assert run.outputs["tokens"] == str(rec["totalTokens"])
    assert run.outputs["tool-count"] == str(rec["toolCount"]) == "4"
    assert run.outputs["canonical-sha256"] == rec["canonicalSha256"]
    assert run.outputs["measurement-path"] == ".mcp-context-cost/results/demo/measurement.json"
    assert run.outputs["delta"] == ""
    badge = json.loads((run.workspace / run.outputs["badge-path"]).read_text())
    assert badge["message"] == f"{rec['totalTokens']:,} tokens"
    assert rec["isolation"]["mode"] == "host"
    assert "| measured | " + f"{rec['totalTokens']:,}" + " | 4 |" in run.summary
    assert "**Gate: passed.**" in run.summary
    # where the tokens go: one row per tool, parts summing exactly to the total
    assert "### Where the tokens go" in run.summary and f"| **total** | **{rec['totalTokens']:,}** |" in run.summary
    section = run.summary.split("### Where the tokens go", 1)[1].split("\n\n")[2]
    rows = [line.strip("|").split("|") for line in section.splitlines()[2:]]
    assert len(rows) == 4 + 2 and sum(int(r[1].replace(",", "")) for r in rows[:-1]) == rec["totalTokens"]
    assert run.errors() == []


@pytest.mark.slow
def test_default_name_is_the_repository_slug(run_action):
    run = run_action({"command": fixture_command("well_behaved")})
    assert run.code == 0, run.stdout + run.stderr
    assert run.record()["server"] == "example_server"


@pytest.mark.slow
def test_budget_breach_fails_with_an_error_annotation(run_action):
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo", "budget": "10"})
    assert run.code == 1
    tokens = run.record()["totalTokens"]
    assert run.errors() == [f"::error title=over budget::demo: {tokens:,} tokens is above the budget of 10 "
                            f"by {tokens - 10:,}"]
    assert run.outputs["tokens"] == str(tokens)
    assert "**Gate: failed.**" in run.summary and "over budget" in run.summary


@pytest.mark.slow
def test_unmeasurable_server_fails_with_an_annotation(run_action):
    run = run_action({"command": 'python3 -c "import sys; sys.exit(1)"', "name": "broken", "budget": "100000"})
    assert run.code == 1
    assert run.outputs["status"] == "startup-failure"
    assert run.outputs["tokens"] == run.outputs["tool-count"] == run.outputs["canonical-sha256"] == ""
    [error] = run.errors()
    assert error.startswith("::error title=server not measured::broken: status startup-failure (no token count)")
    badge = json.loads((run.workspace / run.outputs["badge-path"]).read_text())
    assert (badge["message"], badge["color"]) == ("startup-failure", "lightgrey")


@pytest.mark.slow
def test_baseline_comparison_lists_added_removed_grown_and_delta(run_action):
    first = run_action({"command": fixture_command("well_behaved", "--tools", "4"), "name": "demo"})
    assert first.code == 0, first.stdout + first.stderr
    current = first.record()
    old_tool = {"name": "old_tool", "description": "Old.", "inputSchema": {"type": "object"}}
    baseline = derived_baseline(current, drop="tool_004", shorten="search_issues", add=(old_tool,))
    write_json(first.workspace / "baseline.json", baseline)

    run = run_action({"command": fixture_command("well_behaved", "--tools", "4"), "name": "demo",
                      "baseline": "baseline.json"})
    assert run.code == 0, run.stdout + run.stderr
    delta = current["totalTokens"] - baseline["totalTokens"]
    assert delta > 0 and run.outputs["delta"] == str(delta)
    summary = run.summary
    assert f"| tokens | {baseline['totalTokens']:,} | {current['totalTokens']:,} | {delta:+,}" in summary
    added = summary.split("**Added tools** (1)")[1].split("**")[0]
    assert "tool\\_004" in added
    assert "old\\_tool" in summary.split("**Removed tools** (1)")[1].split("**")[0]
    grown = summary.split("**Grown tools** (1)")[1].split("###")[0]
    before = next(t["tokens"] for t in baseline["tools"] if t["name"] == "search_issues")
    after = next(t["tokens"] for t in current["tools"] if t["name"] == "search_issues")
    assert f"| search\\_issues | {before:,} | {after:,} | {after - before:+,} |" in grown


@pytest.mark.slow
def test_increase_above_max_increase_fails_and_within_passes(run_action):
    first = run_action({"command": fixture_command("well_behaved", "--tools", "3"), "name": "demo"})
    baseline = derived_baseline(first.record(), drop="tool_003", shorten="create_issue")
    write_json(first.workspace / "baseline.json", baseline)
    delta = first.record()["totalTokens"] - baseline["totalTokens"]

    tight = run_action({"command": fixture_command("well_behaved", "--tools", "3"), "name": "demo",
                        "baseline": "baseline.json", "max-increase": "1%"})
    assert tight.code == 1
    [error] = tight.errors()
    assert error.startswith("::error title=increase above max-increase::demo: ")
    assert f"{delta:+,}" in error

    loose = run_action({"command": fixture_command("well_behaved", "--tools", "3"), "name": "demo",
                        "baseline": "baseline.json", "max-increase": str(delta)})
    assert loose.code == 0, loose.stdout
    assert loose.outputs["delta"] == str(delta)


@pytest.mark.slow
def test_hyphenated_inputs_are_read_under_the_underscore_spelling_too(run_action):
    first = run_action({"command": fixture_command("well_behaved"), "name": "demo"})
    write_json(first.workspace / "baseline.json", derived_baseline(first.record(), "create_issue", "search_issues"))
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo", "baseline": "baseline.json"},
                     env={"INPUT_MAX_INCREASE": "0"})
    assert run.code == 1 and "increase above max-increase" in run.stdout


@pytest.mark.slow
def test_missing_baseline_fails_the_gate(run_action):
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo", "baseline": "nope.json"})
    assert run.code == 1
    [error] = run.errors()
    assert error.startswith("::error title=baseline comparison failed::baseline ")
    assert "does not exist" in error
    assert run.outputs["status"] == "measured" and run.outputs["delta"] == ""
    assert "The comparison could not be made" in run.summary


@pytest.mark.slow
@pytest.mark.parametrize("content, why", [
    ("{not json", "is not JSON"),
    ('["a list"]', "is not a measurement record"),
    ('{"server": "demo"}', "is not a valid measurement record"),
])
def test_unusable_baseline_fails_the_gate(run_action, tmp_path, content, why):
    (tmp_path / "workspace" / "baseline.json").write_text(content)
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo", "baseline": "baseline.json"})
    assert run.code == 1
    assert any(why in e for e in run.errors()), run.errors()


@pytest.mark.slow
def test_baseline_without_a_number_fails_the_gate(run_action):
    failed = run_action({"command": 'python3 -c "import sys; sys.exit(1)"', "name": "demo"})
    assert failed.outputs["status"] == "startup-failure"
    (failed.workspace / "old.json").write_text((failed.workspace / failed.outputs["measurement-path"]).read_text())
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo", "baseline": "old.json"})
    assert run.code == 1
    assert any("has status 'startup-failure' and no token count" in e for e in run.errors())


def test_invalid_inputs_fail_with_one_annotation_each(run_action):
    run = run_action({"command": "python3 x.py", "url": "https://example.invalid/mcp", "name": "Bad Name",
                      "budget": "lots", "max-increase": "ten"})
    assert run.code == 1
    errors = run.errors()
    assert [e.split("::")[1] for e in errors] == ["error title=invalid input"] * 4
    for words in ("exactly one of the inputs 'command' and 'url'", "input 'name' must be a slug",
                  "input 'budget' must be a whole number", "input 'max-increase' must be tokens"):
        assert any(words in e for e in errors), (words, errors)
    assert run.outputs["status"] == "error"
    assert "Invalid input" in run.summary


@pytest.mark.slow
def test_declared_env_values_reach_the_server_and_are_redacted(run_action):
    command = fixture_command("well_behaved", "--describe-env", "MY_API_KEY", "--describe-env", "EMPTY_SECRET")
    run = run_action({"command": command, "name": "demo", "env": "MY_API_KEY,\nEMPTY_SECRET"},
                     env={"MY_API_KEY": "sk-real-value-123456", "EMPTY_SECRET": ""})
    assert run.code == 0, run.stdout + run.stderr
    rec = run.record()
    report = next(t for t in rec["rawToolsCapture"] if t["name"] == "env_report")["description"]
    values = json.loads(report.removeprefix("ENV "))["values"]
    assert values["MY_API_KEY"] == "[redacted]"  # the real value arrived, and was redacted
    assert values["EMPTY_SECRET"].startswith("mcp-context-cost-dummy-")  # empty → placeholder
    assert rec["envVarNames"] == ["MY_API_KEY", "EMPTY_SECRET"]
    assert "sk-real-value-123456" not in (run.workspace / run.outputs["measurement-path"]).read_text()
    assert "sk-real-value-123456" not in run.stdout + run.summary
    assert "::notice title=empty env value::EMPTY_SECRET is empty here" in run.stdout


@pytest.mark.slow
def test_container_image_marks_the_record(run_action):
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo"},
                     env={"MCP_CONTEXT_COST_ACTION_IMAGE": "mcp-context-cost action (test)"})
    iso = run.record()["isolation"]
    assert (iso["mode"], iso["image"]) == ("docker", "mcp-context-cost action (test)")


@pytest.mark.slow
def test_working_directory_and_badge_path(run_action, tmp_path):
    (tmp_path / "workspace" / "sub").mkdir()
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo", "working-directory": "sub",
                      "badge-path": "badges/cost.json"})
    assert run.code == 0, run.stdout
    assert run.outputs["badge-path"] == "sub/badges/cost.json"
    assert run.outputs["measurement-path"] == "sub/.mcp-context-cost/results/demo/measurement.json"


@pytest.mark.slow
def test_real_server_outputs_and_baseline_comparison(run_action):
    first = run_action({"command": MEMORY, "name": "memory", "timeout": "120"}, timeout=600)
    assert first.code == 0, first.stdout + first.stderr
    rec = first.record()
    assert rec["status"] == "measured" and rec["toolCount"] > 2
    assert first.outputs["tokens"] == str(rec["totalTokens"])
    assert first.outputs["tool-count"] == str(rec["toolCount"])
    assert first.outputs["canonical-sha256"] == rec["canonicalSha256"]
    assert f"| measured | {rec['totalTokens']:,} | {rec['toolCount']} |" in first.summary

    names = [t["name"] for t in rec["tools"]]
    dropped, shortened = names[-1], names[0]
    baseline = derived_baseline(rec, drop=dropped, shorten=shortened)
    write_json(first.workspace / "baseline.json", baseline)
    run = run_action({"command": MEMORY, "name": "memory", "timeout": "120", "baseline": "baseline.json",
                      "max-increase": "50%", "budget": "100000"}, timeout=600)
    assert run.code == 0, run.stdout + run.stderr
    now = run.record()
    assert now["canonicalSha256"] == rec["canonicalSha256"]
    delta = now["totalTokens"] - baseline["totalTokens"]
    assert run.outputs["delta"] == str(delta) and delta > 0
    escaped = lambda name: name.replace("_", "\\_").replace("-", "\\-")  # noqa: E731
    assert escaped(dropped) in run.summary.split("**Added tools** (1)")[1].split("**")[0]
    assert escaped(shortened) in run.summary.split("**Grown tools** (1)")[1].split("###")[0]
    assert "**Removed tools**" not in run.summary

    over = run_action({"command": MEMORY, "name": "memory", "timeout": "120", "budget": "1"}, timeout=600)
    assert over.code == 1
    assert [e.split("::")[1] for e in over.errors()] == ["error title=over budget"]
