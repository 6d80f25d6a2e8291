"""The capability probe (capability-probe/v1; spec "What the client declares"): two
captures differing only in the declaration; roots answered with an empty list, elicitation
declined, sampling never declared; servers whose tool set differs are recorded with the tools
gained and their tokens and their headline marked a floor; a server with no difference is not.
The real ``everything`` server is the known case (slow)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from types import SimpleNamespace

import pytest

from harness.cli import capability_probe_cmd
from harness.core.counting import count_tools
from harness.core.jsparse import parse
from harness.readings import capability_probe as cp
from harness.probe import build_record as record
from harness.probe.measure import measure_sync
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.pages import builders as b


def _probe(name: str, *flags: str, script: str = "capability_aware"):
    return asyncio.run(cp.probe(Target(name=name, command=fixture_command(script, *flags), timeout_seconds=30)))


def test_declares_roots_and_elicitation_only_and_answers_them_truthfully():
    assert cp.DECLARED == {"roots": {}, "elicitation": {}} and "sampling" not in cp.DECLARED
    pair = _probe("aware")
    assert pair.compared and not pair.status_changed
    diff = cp.difference(pair.without.capture.tools, pair.with_.capture.tools)
    gained = {t["name"]: t for t in pair.with_.capture.tools if t["name"] in {"list_roots", "ask_user"}}
    assert [g["name"] for g in diff["gained"]] == ["list_roots", "ask_user"]  # never sample_llm
    assert gained["list_roots"]["description"] == 'answer: {"roots": []}'
    assert gained["ask_user"]["description"] == 'answer: {"action": "decline"}'
    assert pair.with_.capture.server_requests == ["roots/list", "elicitation/create"]
    counted = count_tools(pair.with_.capture.tools)
    tokens = {t.name: t.tokens for t in counted.tools}
    assert diff["gained"] == [{"name": "list_roots", "tokens": tokens["list_roots"]},
                              {"name": "ask_user", "tokens": tokens["ask_user"]}]
    assert diff["deltaTokens"] == counted.totalTokens - count_tools(pair.without.capture.tools).totalTokens
    assert diff["lost"] == [] and diff["changed"] == []
    # the plain posture is the headline's: a roots-declaring server gets nothing extra from it
    assert [t["name"] for t in pair.without.capture.tools] == ["search_issues", "create_issue"]


def test_lost_tools_are_recorded_too():
    pair = _probe("loses", "--lose")
    diff = cp.difference(pair.without.capture.tools, pair.with_.capture.tools)
    assert [t["name"] for t in diff["lost"]] == ["create_issue"]


def test_a_server_that_changes_between_its_own_launches_is_not_compared():
    """Its plain posture is dynamic: the declaring launch differing from it says nothing about
    capabilities, so nothing is recorded as gained."""
    pair = _probe("changes", "--fresh-name", script="volatile")  # new tools at every launch, whatever their order
    assert pair.without.status == "dynamic" and pair.with_.capture.ok
    assert not pair.compared and not pair.status_changed


def test_no_difference_is_none():
    pair = _probe("plain", script="well_behaved")
    assert pair.compared and cp.difference(pair.without.capture.tools, pair.with_.capture.tools) is None


@pytest.mark.slow
def test_command_records_only_differences_and_marks_the_floor(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    commands = {"aware": fixture_command("capability_aware"), "plain": fixture_command("well_behaved"),
                "dead": fixture_command("init_then_exit")}
    b.write_catalog(root, [{"name": n, "command": c} for n, c in commands.items()])
    for name in ("aware", "plain"):
        rec = record.build(measure_sync(Target(name=name, command=commands[name]), isolation="host"))
        record.write(rec, root / "results")
    args = SimpleNamespace(root=root, catalog="servers.yaml", only=None, top=None, isolation="host",
                           concurrency=2, no_regen=False)
    assert capability_probe_cmd.run(args) == 0
    doc = parse((root / "results/capability-probe.json").read_text())
    assert [r["server"] for r in doc["rows"]] == ["aware"]
    assert doc["declared"] == {"roots": {}, "elicitation": {}} and doc["method"] == "capability-probe/v1"
    assert doc["lastRun"]["probed"] == 3 and doc["lastRun"]["compared"] == 2
    assert doc["lastRun"]["notCompared"] == [{"server": "dead", "withoutCapabilities": "startup-failure",
                                             "withCapabilities": "startup-failure"}]
    row = doc["rows"][0]
    cells = {r["server"]: r for r in csv.DictReader(io.StringIO((root / "results/leaderboard.csv").read_text()))}
    assert cells["aware"]["capabilityFloorTokens"] == str(int(row["deltaTokens"])) and cells["plain"]["capabilityFloorTokens"] == ""
    page = (root / "docs/servers/aware.md").read_text()
    assert "the headline is a **floor**" in page and "list\\_roots" in page
    # one wording of the probe cell on the leaderboard and the dashboard (they once said "2 more
    # tool(s)" and "+2 tool(s)")
    board, dashboard = (root / "results/leaderboard.md").read_text(), (root / "docs/index.html").read_text()
    assert "| floor: 2 more tools, " in board and "<td>floor: 2 more tools, " in dashboard
    assert "tool(s)" not in board + dashboard
    assert "floor" not in (root / "docs/servers/plain.md").read_text()

    # Re-probing "aware" alone with a changed server removes nothing else; a server that no longer
    # differs leaves the file.
    b.write_catalog(root, [{"name": "aware", "command": fixture_command("well_behaved")},
                           {"name": "plain", "command": commands["plain"]}, {"name": "dead", "command": commands["dead"]}])
    assert capability_probe_cmd.run(SimpleNamespace(**{**vars(args), "only": "aware"})) == 0
    assert parse((root / "results/capability-probe.json").read_text())["rows"] == []


EVERYTHING = "npx -y @modelcontextprotocol/server-everything@2026.8.18"
MEMORY = "npx -y @modelcontextprotocol/server-memory@2026.8.31"


@pytest.mark.slow
def test_the_real_everything_server_gains_tools_and_memory_does_not(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [{"name": "everything", "command": EVERYTHING}, {"name": "memory", "command": MEMORY}])
    rec = record.build(measure_sync(Target(name="everything", command=EVERYTHING, timeout_seconds=120), isolation="host"))
    record.write(rec, root / "results")
    args = SimpleNamespace(root=root, catalog="servers.yaml", only=None, top=None, isolation="host",
                           concurrency=2, no_regen=False)
    assert capability_probe_cmd.run(args) == 0
    doc = parse((root / "results/capability-probe.json").read_text())
    assert [r["server"] for r in doc["rows"]] == ["everything"]  # memory: no difference, not listed
    row = doc["rows"][0]
    assert {t["name"] for t in row["gained"]} == {"get-roots-list", "trigger-elicitation-request"}
    assert row["lost"] == [] and row["deltaTokens"] == 197  # the spec's reading: two tools and 197 tokens
    assert row["withoutCapabilities"]["canonicalSha256"] == rec["canonicalSha256"]
    assert doc["lastRun"]["compared"] == 2 and doc["lastRun"]["statusChanged"] == []
    assert "the headline is a **floor**" in (root / "docs/servers/everything.md").read_text()
    assert json.dumps(doc).count("sampling") == 0
