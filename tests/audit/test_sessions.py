"""Sessions, the managed tier and the lists (methodology, §The managed tier owns the server list,
§The allowlist and the denylist): composition per managed-mcp.json state, deny applied, allow
reported and never subtracted, allowManagedMcpServersOnly, set-but-unevaluated entries; the
report assembled from them validates against its schema. Outcomes are built from real counts of
small tool lists — no server is launched here (the end-to-end tests launch real ones)."""

from __future__ import annotations

import json

import pytest

from harness.audit import claude_settings, discovery, identity, report, sessions
from harness.audit.measuring import Outcome
from harness.audit.policy import read_policy, url_matches
from harness.audit.posture import Band
from harness.core.counting import count_tools
from harness.util import schemas


def outcome(tools: int = 2, status: str = "measured") -> Outcome:
    capture = [{"name": f"tool_{i}", "description": "does a thing " * (i + 1), "inputSchema": {"type": "object"}}
               for i in range(tools)]
    counts = count_tools(capture).to_json()
    if status not in ("measured", "dynamic"):
        return Outcome(status, notes=["it failed"])
    return Outcome(status, capture, counts["totalTokens"], counts["toolCount"], counts["canonicalSha256"],
                   counts["tools"])


def audit(layout, outcomes_for=None, context=200_000):
    files = discovery.discover(layout)
    groups = identity.group([e for f in files for e in f.entries])
    outcomes = {key: (outcomes_for or (lambda entries: outcome()))(entries) for key, entries in groups.items()}
    places = [claude_settings.shell_place({})] + claude_settings.settings_places(layout)
    built = report.build(files, sessions.compose(files), outcomes, context=context, isolation="host", places=places,
                         policy=read_policy(places[1:]), band=Band(), managed_path="/managed-mcp.json")
    built["gates"], built["exitCode"] = [], 0
    schemas.check("audit-report", built)
    return built


def claude(report_):
    return next(s for s in report_["sessions"] if s["client"] == "claude-code")


def write_managed(layout, content: str):
    path = layout.system_root / "etc" / "claude-code" / "managed-mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)


def test_without_managed_file_the_session_is_user_local_project(machine):
    session = claude(audit(machine))
    assert session["composition"] == "user+local+project"
    assert {s["name"] for s in session["servers"]} == {"memory", "local-only", "api-server", "db-tool", "shared"}
    assert session["deferral"]["managedMcp"]["state"] == "absent"


def test_managed_file_with_servers_owns_the_session_and_files_keep_their_totals(machine):
    write_managed(machine, json.dumps({"mcpServers": {"company": {"type": "stdio", "command": "company-mcp"}}}))
    built = audit(machine)
    session = claude(built)
    assert session["composition"] == "managed" and [s["name"] for s in session["servers"]] == ["company"]
    assert any("suppressed" in x["reason"] for x in session["excluded"])
    assert any(c["path"] == ".mcp.json" and c["total"]["tokens"] > 0 for c in built["configs"])  # still measured
    assert session["deferral"]["managedMcp"]["state"] == "servers"


def test_managed_file_with_an_empty_map_disables_mcp(machine):
    write_managed(machine, '{"mcpServers": {}}')
    session = claude(audit(machine))
    assert session["composition"] == "managed-empty" and session["servers"] == []
    assert session["total"]["tokens"] == 0 and not session["total"]["floor"]


@pytest.mark.parametrize("content", ["{broken", '{"servers": {}}', "[]"])
def test_unreadable_managed_file_refuses_the_composition(machine, content):
    write_managed(machine, content)
    session = claude(audit(machine))
    assert session["total"] is None and session["refused"]
    kinds = [r["kind"] for r in session["deferral"]["refusals"]]
    assert "managed-mcp-unreadable" in kinds and session["deferral"]["managedMcp"]["state"] == "unreadable"


def write_settings(layout, where: str, document: dict):
    path = {"user": layout.home / ".claude" / "settings.json",
            "project": layout.cwd / ".claude" / "settings.json",
            "managed": layout.system_root / "etc" / "claude-code" / "managed-settings.json"}[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


def test_deny_is_applied_to_the_session_and_never_to_the_file(machine):
    write_settings(machine, "user", {"deniedMcpServers": [{"serverName": "memory"},
                                                          {"serverUrl": "https://API.example.com/*"}]})
    built = audit(machine)
    session = claude(built)
    names = {s["name"] for s in session["servers"]}
    assert "memory" not in names and "api-server" not in names
    assert {x["name"] for x in session["excluded"] if x["reason"].startswith("denied by")} == {"memory", "api-server"}
    user_file = next(c for c in built["configs"] if c["path"] == "~/.claude.json")
    assert "memory" in {s["name"] for s in user_file["servers"]} and user_file["total"]["tokens"] > 0


def test_allow_is_reported_and_never_subtracted(machine):
    write_settings(machine, "project", {"allowedMcpServers": [{"serverCommand": ["local-server"]}]})
    session = claude(audit(machine))
    verdicts = {s["name"]: s["allow"] for s in session["servers"]}
    assert verdicts["local-only"] == "allowed" and verdicts["memory"] == "not-on-allowlist"
    assert "memory" in verdicts  # reported, still counted


def test_allow_managed_only_narrows_the_counted_allowlist(machine):
    write_settings(machine, "managed", {"allowManagedMcpServersOnly": True, "allowedMcpServers": [{"serverName": "memory"}]})
    write_settings(machine, "user", {"allowedMcpServers": [{"serverName": "local-only"}]})
    session = claude(audit(machine))
    verdicts = {s["name"]: s["allow"] for s in session["servers"]}
    assert verdicts["memory"] == "allowed" and verdicts["local-only"] == "not-on-allowlist"
    assert session["deferral"]["policy"]["allowManagedMcpServersOnly"] is True


def test_list_entries_with_references_are_set_but_unevaluated(machine):
    write_settings(machine, "user", {"deniedMcpServers": [{"serverCommand": ["${HOME}/bin/memory"]},
                                                          {"serverName": "${NAME}"}, {"bogus": 1}]})
    policy = claude(audit(machine))["deferral"]["policy"]
    assert policy["denyEntries"] == 1  # the serverName entry matches literally (names never expand)
    assert any("set-but-unevaluated" in s for s in policy["setButUnevaluated"])
    assert any("not one of serverName" in s for s in policy["setButUnevaluated"])


@pytest.mark.parametrize("pattern, url, expected", [
    ("https://mcp.company.com/*", "https://mcp.company.com/api", True),
    ("https://*.example.com/*", "https://a.b.example.com/x", True),
    ("https://Mcp.Example.com/*", "https://mcp.example.com./api", True),
    ("https://mcp.example.com/API/*", "https://mcp.example.com/api/x", False),  # paths stay case-sensitive
    ("http://localhost:*/*", "http://localhost:8080/mcp", True),
    ("*://*.untrusted.com/*", "https://x.untrusted.com/mcp", True),
    ("https://mcp.example.com/*", "https://mcp.example.com.evil/x", False),
])
def test_url_patterns(pattern, url, expected):
    assert url_matches(pattern, url) is expected


def test_always_load_entries_are_named_and_left_out_of_the_threshold(machine):
    write_settings(machine, "user", {"env": {"ENABLE_TOOL_SEARCH": "auto:0"}})
    deferral = claude(audit(machine))["deferral"]
    assert [p["name"] for p in deferral["alwaysLoad"]] == ["db-tool"]
    assert deferral["posture"]["posture"] == "threshold" and deferral["threshold"]["verdict"] == "above"


def test_threshold_straddling_is_a_named_refusal(machine):
    write_settings(machine, "user", {"env": {"ENABLE_TOOL_SEARCH": "auto:1"}})
    deferral = claude(audit(machine, context=30_000))["deferral"]
    assert deferral["threshold"]["verdict"] == "straddles"
    assert [r["kind"] for r in deferral["refusals"]] == ["threshold-straddles"]


def test_two_entries_collapsed_onto_one_measurement_refuse_the_threshold(machine):
    (machine.cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "work": {"command": "gh-mcp", "env": {"GH_TOKEN": "work-token-aaaa"}},
        "personal": {"command": "gh-mcp", "env": {"GH_TOKEN": "personal-token-bbbb"}}}}))
    write_settings(machine, "user", {"env": {"ENABLE_TOOL_SEARCH": "auto"}})
    session = claude(audit(machine))
    assert len({s["identity"] for s in session["servers"] if s["name"] in ("work", "personal")}) == 1
    assert "collapsed-entries" in [r["kind"] for r in session["deferral"]["refusals"]]
    assert session["total"]["floor"] is True
    assert "work-token-aaaa" not in json.dumps(session)


def test_an_unmeasured_server_makes_every_total_it_is_in_a_floor(machine):
    built = audit(machine, lambda entries: outcome(status="auth-required") if entries[0].name == "memory" else outcome())
    user_file = next(c for c in built["configs"] if c["path"] == "~/.claude.json")
    assert user_file["total"]["floor"] and user_file["total"]["display"].startswith("≥ ")
    assert "memory" in claude(built)["total"]["unmeasured"]


def test_other_clients_get_their_record_not_a_posture(machine):
    built = audit(machine)
    cursor = next(s for s in built["sessions"] if s["client"] == "cursor")
    assert cursor["deferral"] is None and cursor["record"]["record"] == "on-record-deferring"
    assert cursor["record"]["sources"][0]["address"].startswith("https://cursor.com/blog/")
    goose = next(s for s in built["sessions"] if s["client"] == "goose")
    assert goose["record"]["record"] == "paid-in-full" and goose["total"]["floor"]  # a builtin has no number
    kinds = {r["client"]: r["record"] for r in built["records"]}
    assert kinds["zed"] == "paid-in-full" and kinds["cline"] == "not-searched"


def test_a_client_tool_filter_is_counted_again_with_the_same_rules():
    from harness.audit.measuring import cost
    from harness.audit.model import Entry

    measured = outcome(tools=4)
    entry = Entry("s", "gemini-cli", "x", "user", "stdio", include_tools=("tool_0", "tool_2", "tool_3"),
                  exclude_tools=("tool_3",))
    result = cost(entry, measured)
    kept = [t for t in measured.tools if t["name"] in ("tool_0", "tool_2")]
    assert (result.tokens, result.tool_count, result.filtered) == (count_tools(kept).totalTokens, 2, 2)
    plain = cost(Entry("s", "cursor", "x", "user", "stdio"), measured)
    assert (plain.tokens, plain.filtered) == (measured.tokens, 0)


@pytest.mark.parametrize("platform, desktop, managed", [
    ("darwin", "home/Library/Application Support/Claude/claude_desktop_config.json",
     "sys/Library/Application Support/ClaudeCode/managed-mcp.json"),
    ("linux", "home/.config/Claude/claude_desktop_config.json", "sys/etc/claude-code/managed-mcp.json"),
])
def test_platform_paths(tmp_path, platform, desktop, managed):
    from harness.audit.clients import claude_code, claude_desktop
    from harness.audit.clients.config_format import Layout

    layout = Layout(home=tmp_path / "home", cwd=tmp_path / "p", platform=platform, system_root=tmp_path / "sys")
    assert claude_desktop.candidates(layout)[0].path == tmp_path / desktop
    assert claude_code.candidates(layout)[2].path == tmp_path / managed
    windows = Layout(home=tmp_path, cwd=tmp_path, platform="win32", appdata=tmp_path / "AppData" / "Roaming")
    assert claude_desktop.candidates(windows)[0].path == tmp_path / "AppData/Roaming/Claude/claude_desktop_config.json"
    assert str(claude_code.managed_dir(windows)).replace("\\", "/") == "C:/Program Files/ClaudeCode"


def test_redaction_leaves_the_report_valid_when_a_value_is_a_word_of_its_vocabulary(machine):
    from harness.audit.report import redact
    from harness.probe.redact import Redactor

    built = audit(machine)
    cleaned = redact(built, Redactor(["stdio", "measured", "read-only", "claude-code", "deferred"]))
    schemas.check("audit-report", cleaned)
    assert cleaned["configs"][0]["servers"][0]["transport"] == "stdio"
    assert cleaned["configs"][0]["servers"][0]["status"] == "measured"
