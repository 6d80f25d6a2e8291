"""A fixture config per client, written from each client's documented format,
is discovered under a temporary HOME and cwd and parsed into the right servers — disabled entries,
tool filters, expansions (evaluated where the value is in hand, set-but-unevaluated where not) and
remote entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.audit import discovery, sessions
from harness.audit.model import ABSENT, BUILTIN, EXTENSION, HTTP, READ, SSE, STDIO, UNREADABLE


def by_name(files, client):
    return {e.name: e for f in files if f.client == client for e in f.entries}


@pytest.fixture
def found(machine):
    return discovery.discover(machine)


def test_every_client_file_is_found_and_read(found, machine):
    states = {(f.client, f.display): f.state for f in found}
    read = sorted({client for (client, _), state in states.items() if state == READ})
    assert read == sorted(["claude-code", "claude-desktop", "cursor", "vscode", "windsurf", "gemini-cli", "zed", "kiro",
                           "goose", "codex-cli", "cline", "continue"])
    assert states[("claude-code", "~/.claude.json")] == READ
    assert states[("claude-code", ".mcp.json")] == READ
    assert states[("claude-code", str(machine.system_root / "etc/claude-code/managed-mcp.json"))] == ABSENT
    assert all(not f.display.startswith(str(Path.home())) or str(Path.home()) == str(machine.home) for f in found)


def test_claude_code_scopes_match_the_project_on_its_resolved_path(found):
    servers = by_name(found, "claude-code")
    assert servers["memory"].scope == "user"
    assert servers["local-only"].scope == "local"  # projects["<project>/."] resolves to the project
    assert "elsewhere" not in servers
    api = servers["api-server"]
    assert (api.transport, api.url) == (HTTP, "${API_BASE_URL:-https://api.example.com}/mcp")
    assert api.launch_url == "https://api.example.com/mcp"  # the default, API_BASE_URL being unset
    assert api.header_values == {"Authorization": "Bearer claude-api-key-5678"}
    db = servers["db-tool"]
    assert db.always_load is True and db.env_names == ("DATABASE_URL",)
    assert db.unevaluated == ["env.DATABASE_URL: ${DATABASE_URL}"] and "DATABASE_URL" not in db.env_values


def test_claude_code_session_precedence_local_project_user(found):
    session = next(s for s in sessions.compose(found) if s.client == "claude-code")
    loaded = {(e.name, e.scope) for e in session.members}
    assert ("shared", "project") in loaded and ("shared", "user") not in loaded
    assert any(e.name == "shared" and "shadowed by the project-scope" in why for e, why in session.excluded)


def test_cursor_interpolation(found, machine):
    servers = by_name(found, "cursor")
    docs = servers["docs"]
    assert docs.launch_argv[-1] == f"{machine.home}/docs"
    assert docs.env_values == {"DOCS_KEY": "cursor-key-value-1234"}
    linear = servers["linear"]
    assert linear.transport == HTTP and linear.header_names == ("Authorization",)
    assert linear.unevaluated == ["headers.Authorization: ${env:LINEAR_TOKEN}"]
    project = servers["project-tools"]  # a JSONC file: comments and trailing commas
    assert project.launch_argv == ("node", f"{machine.cwd}/tools/server.js") and project.cwd == str(machine.cwd)


def test_vscode_inputs_are_never_in_hand(found):
    servers = by_name(found, "vscode")
    assert servers["github"].unevaluated == ["headers.Authorization: ${input:gh-token}"]
    assert servers["github"].launchable  # the URL is in hand; the header goes out as a placeholder name
    assert any("envFile" in u for u in servers["fetch"].unevaluated)
    assert servers["memory"].scope == "workspace"
    assert "env.KEY: ${env:VSCODE_KEY}" in servers["memory"].unevaluated


def test_windsurf_server_url_and_disabled(found):
    servers = by_name(found, "windsurf")
    assert servers["zapier"].transport == HTTP and servers["zapier"].url == "https://actions.zapier.com/mcp/sse"
    assert servers["old"].disabled == "disabled: true" and not servers["old"].launchable
    assert servers["git"].disabled is None


def test_gemini_filters_transports_and_excluded(found):
    files = [f for f in found if f.client == "gemini-cli" and f.scope == "user"]
    servers = {e.name: e for e in files[0].entries}
    tools = servers["python-tools"]
    assert tools.include_tools == ("safe_tool", "file_reader") and tools.exclude_tools == ("file_reader",)
    assert tools.env_values["DATABASE_URL"] == "postgres://u:p@h/db"  # $VAR form
    assert tools.unevaluated == ["env.API_KEY: ${EXTERNAL_API_KEY}"] and tools.cwd == "./mcp-servers/python"
    assert servers["http-server"].transport == HTTP and servers["sse-server"].transport == SSE
    assert servers["experimental"].disabled == "listed in mcp.excluded"
    session = next(s for s in sessions.compose(found) if s.client == "gemini-cli")
    assert [e.scope for e in session.members if e.name == "python-tools"] == ["project"]


def test_zed_forms(found):
    servers = by_name(found, "zed")
    assert servers["custom"].launch_argv == ("some-command", "arg-1", "arg-2")
    assert servers["legacy"].launch_argv == ("legacy-server", "--stdio") and servers["legacy"].env_names == ("TOKEN",)
    assert servers["from-extension"].transport == EXTENSION and not servers["from-extension"].launchable
    assert servers["remote"].transport == HTTP and servers["remote"].header_names == ("Authorization",)
    assert servers["off"].disabled == "enabled: false"
    assert servers["project-zed"].scope == "project"


def test_kiro_disabled_tools_and_precedence(found):
    servers = [e for f in found if f.client == "kiro" for e in f.entries]
    user_docs = next(e for e in servers if e.name == "aws-docs" and e.scope == "user")
    assert user_docs.exclude_tools == ("recommend",)
    assert next(e for e in servers if e.name == "paused").disabled == "disabled: true"
    session = next(s for s in sessions.compose(found) if s.client == "kiro")
    assert [e.scope for e in session.members if e.name == "aws-docs"] == ["workspace"]


def test_goose_extensions(found):
    servers = by_name(found, "goose")
    assert servers["developer"].transport == BUILTIN and not servers["developer"].launchable
    fs = servers["filesystem"]
    assert fs.launch_argv[:2] == ("npx", "-y") and fs.include_tools == ("read_file", "list_directory")
    assert set(fs.env_names) == {"FS_MODE", "GOOSE_FS_TOKEN"} and fs.env_values == {"FS_MODE": "read-only"}
    assert any("GOOSE_FS_TOKEN" in u for u in fs.unevaluated)
    assert servers["remote-tools"].transport == HTTP and servers["remote-tools"].launch_url == "https://example.com/mcp"
    assert servers["switched-off"].disabled == "enabled: false"


def test_codex_tables(found):
    servers = by_name(found, "codex-cli")
    assert servers["context7"].env_names == ("LOG_LEVEL", "CONTEXT7_API_KEY")
    figma = servers["figma"]
    assert figma.transport == HTTP and figma.include_tools == ("get_code",)
    assert figma.header_names == ("Authorization",) and "FIGMA_OAUTH_TOKEN" in figma.unevaluated[0]
    assert servers["retired"].disabled == "enabled: false"
    assert servers["project-codex"].scope == "project"


def test_cline_and_desktop(found):
    cline = by_name(found, "cline")
    assert cline["remote-server"].transport == HTTP and cline["off"].disabled
    assert cline["local-server"].env_values == {"API_KEY": "cline-literal-key-5678"}
    desktop = by_name(found, "claude-desktop")
    assert set(desktop) == {"filesystem", "github"} and desktop["github"].env_names == ("GITHUB_PERSONAL_ACCESS_TOKEN",)


def test_continue_lists_blocks_and_secrets(found):
    servers = by_name(found, "continue")
    assert servers["GitHub"].unevaluated == [
        "env.GITHUB_PERSONAL_ACCESS_TOKEN: ${{ secrets.GITHUB_PERSONAL_ACCESS_TOKEN }}"]
    assert servers["Remote"].transport == HTTP
    assert servers["Browser search"].scope == "workspace"
    assert servers["from-claude"].launch_argv == ("npx", "-y", "some-claude-style-server")


def test_every_secret_value_is_known_to_the_redactor(found):
    from harness.audit.measuring import redactor_for

    redactor = redactor_for([e for f in found for e in f.entries])
    for value in ("cursor-key-value-1234", "claude-api-key-5678", "zed-literal-token-1234", "abc-zed-1234",
                  "cline-literal-key-5678", "ghp_desktopliteral0000", "postgres://u:p@h/db"):
        # A run of 8+ characters of a handed value is a secret, so for a header handed as
        # "Bearer <key>" the space before the key goes with it.
        assert redactor.text(f"x {value} y") in ("x [redacted] y", "x[redacted] y")
    assert all(value not in repr(e) for f in found for e in f.entries for value in e.env_values.values())


@pytest.mark.parametrize("content, expected", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "the top level is not an object"),
    ('{"mcpServers": {"a": {"command": 3}}}', "mcpServers.a.command"),
    ('{"mcpServers": {"a": {"command": "x", "args": "no"}}}', "mcpServers.a.args"),
    ('{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}', "mcpServers.a.env.K"),
    ('{"mcpServers": {"a": {"type": "carrier-pigeon", "url": "x"}}}', "unknown transport"),
    ('{"mcpServers": {"a": {"url": "ftp://x"}}}', "not an http(s) URL"),
    ('{"mcpServers": ["a"]}', "the entry is not an object"),
    ('{"mcpServers": 7}', "mcpServers is not an object"),
])
def test_bad_entries_name_the_field(machine, content, expected):
    path = machine.cwd / "team.json"
    path.write_text(content)
    [cfile] = discovery.discover(machine, [path], search=False)
    texts = [cfile.error or ""] + cfile.notes + [p for e in cfile.entries for p in e.problems]
    assert any(expected in t for t in texts), texts
    assert cfile.client is None and all(e.client == "unknown" for e in cfile.entries)


def test_unknown_client_file_leaves_every_reference_unevaluated(machine):
    path = machine.cwd / "team.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "srv", "env": {"A": "${API_KEY}", "B": "${env:X}"}}}}))
    [cfile] = discovery.discover(machine, [path], search=False)
    [entry] = cfile.entries
    assert entry.env_values == {} and len(entry.unevaluated) == 2  # API_KEY is set, but whose syntax is this?


def test_bounded_yaml_and_size(machine):
    aliases = "x: &x [1]\n" + "\n".join(f"y{i}: *x" for i in range(150))  # an alias bomb's shape, small
    path = machine.cwd / "bomb.yaml"
    path.write_text(aliases)
    [cfile] = discovery.discover(machine, [path], search=False)
    assert cfile.state == UNREADABLE and "aliases" in cfile.error
    big = machine.cwd / "big.json"
    big.write_text("{" + " " * 300_000 + "// comment\n}")
    [cfile] = discovery.discover(machine, [big], search=False)
    assert cfile.state == UNREADABLE and "strict JSON" in cfile.error


def test_transports_are_only_known_ones(found):
    assert {e.transport for f in found for e in f.entries} <= {STDIO, HTTP, SSE, BUILTIN, EXTENSION}
