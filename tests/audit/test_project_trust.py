"""``audit`` in a freshly cloned, hostile repository: a project's server is launched only when its
client's approval of it is on record in a file the repository cannot write, or with
``--trust-project`` (then in the sandbox). An unapproved entry is never launched, never expanded
from the caller's environment, counted in no total and no budget, and its line says why and how
to opt in. Each client's project file is tried with a command that leaves a marker file behind.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.audit import discovery
from harness.audit.clients.config_format import Layout
from tests.audit.conftest import report_of, run_audit
from tests.conftest import FIXTURE_SERVERS

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing: scripts/setup.sh installs it")
WELL = [sys.executable, str(FIXTURE_SERVERS / "well_behaved.py")]


def _marker_argv(marker: Path) -> list[str]:
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of printable ASCII is a TOML basic string


def plant(project: Path, client: str, name: str, argv: list[str]) -> Path:
    """Write ``client``'s project-scope config holding one stdio server ``name`` running ``argv``."""
    command, args = argv[0], argv[1:]
    plain = {"mcpServers": {name: {"command": command, "args": args}}}
    files = {
        "claude-code": (".mcp.json", plain),
        "vscode": (".vscode/mcp.json", {"servers": {name: {"type": "stdio", "command": command, "args": args}}}),
        "cursor": (".cursor/mcp.json", plain),
        "gemini-cli": (".gemini/settings.json", plain),
        "kiro": (".kiro/settings/mcp.json", plain),
        "zed": (".zed/settings.json", {"context_servers": {name: {"command": command, "args": args}}}),
    }
    if client in files:
        relative, document = files[client]
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document), encoding="utf-8")
    elif client == "continue":
        path = project / ".continue" / "mcpServers" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump({"name": name, "version": "1", "schema": "v1",
                                        "mcpServers": [{"name": name, "command": command, "args": args}]}))
    else:
        path = project / ".codex" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"[mcp_servers.{name}]\ncommand = {_toml_string(command)}\n"
                        f"args = [{', '.join(_toml_string(a) for a in args)}]\n")
    return path


CLIENTS = ("claude-code", "vscode", "cursor", "gemini-cli", "kiro", "zed", "continue", "codex-cli")


@pytest.fixture
def cloned(tmp_path):
    """A real git repository (the "freshly cloned" project), an empty HOME, and a marker folder."""
    home, project, markers = tmp_path / "home", tmp_path / "repo", tmp_path / "markers"
    for folder in (home, project, markers):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, project, markers


def _servers(report: dict) -> dict[str, dict]:
    return {(c["client"], s["name"]): s for c in report["configs"] for s in c["servers"]}


@pytest.mark.slow
def test_no_project_server_of_any_client_is_launched_without_an_approval(cloned):
    home, project, markers = cloned
    for client in CLIENTS:
        plant(project, client, f"evil-{client}", _marker_argv(markers / client))
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"mine": {"command": WELL[0], "args": WELL[1:]}}}))
    done = run_audit(["--single", "--json", "--budget", "100000"], project, home)
    assert list(markers.iterdir()) == [], "an unapproved project server ran"
    report = report_of(done.stdout)
    rows = _servers(report)
    for client in CLIENTS:
        row = rows[(client, f"evil-{client}")]
        assert row["status"] == "not-approved" and row["identity"] is None and row["tokens"] is None
        assert row["trust"]["state"] == "not-approved" and "--trust-project" in row["trust"]["reason"]
    # excluded from every total: the file totals are exact zeros, the sessions name why
    for config in report["configs"]:
        if config["client"] != "claude-code" or config["scope"] == "project":
            assert config["total"]["tokens"] == 0 and not config["total"]["floor"], config["path"]
    for session in report["sessions"]:
        assert not any(s["name"].startswith("evil-") for s in session["servers"])
        reasons = [e["reason"] for e in session["excluded"] if e["name"].startswith("evil-")]
        assert reasons and all(r.startswith("not approved:") for r in reasons)
    claude = next(s for s in report["sessions"] if s["client"] == "claude-code")
    assert [s["name"] for s in claude["servers"]] == ["mine"] and not claude["total"]["floor"]
    assert report["gates"][0]["passed"], report["gates"]  # the budget sees only what the client loads
    assert done.returncode == 0, done.stderr
    assert "not launched" in done.stderr and "--trust-project" in done.stderr


@pytest.mark.parametrize("settings, reason", [
    ({"disabledMcpjsonServers": ["evil"]}, "rejected in ~/.claude/settings.json (disabledMcpjsonServers)"),
    pytest.param({"enableAllProjectMcpServers": False}, "enableAllProjectMcpServers is false in ~/.claude/settings.json",
                 marks=pytest.mark.slow),
    pytest.param({"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["evil"]}, "rejected",
                 marks=pytest.mark.slow),
    pytest.param({"enabledMcpjsonServers": ["someone-else"]}, "no approval of it is on record", marks=pytest.mark.slow),
])
def test_claude_code_rejections_and_missing_approvals(cloned, settings, reason):
    home, project, markers = cloned
    plant(project, "claude-code", "evil", _marker_argv(markers / "m"))
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    done = run_audit(["--single", "--json"], project, home)
    row = _servers(report_of(done.stdout))[("claude-code", "evil")]
    assert row["status"] == "not-approved" and reason in row["trust"]["reason"]
    assert not (markers / "m").exists()


def test_a_rejected_server_stays_rejected_with_the_opt_in(cloned):
    home, project, markers = cloned
    plant(project, "claude-code", "evil", _marker_argv(markers / "m"))
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): {"disabledMcpjsonServers": ["evil"]}}}))
    done = run_audit(["--single", "--json", "--trust-project"], project, home)
    row = _servers(report_of(done.stdout))[("claude-code", "evil")]
    assert row["trust"]["state"] == "rejected" and row["status"] == "not-approved"
    assert not (markers / "m").exists()


def _layout(home: Path, project: Path, environ: dict | None = None, opted: bool = False) -> Layout:
    return Layout(home=home.resolve(), cwd=project.resolve(), platform="linux", environ=environ or {},
                  system_root=home / "no-system", trust_project=opted)


def _entries(layout: Layout) -> dict:
    return {(e.client, e.name): e for f in discovery.discover(layout) for e in f.entries}


@pytest.mark.parametrize("where, document, dialog, approved", [
    ("~/.claude.json", {"enabledMcpjsonServers": ["evil"]}, False, True),
    ("~/.claude.json", {"enableAllProjectMcpServers": True}, False, True),
    ("~/.claude/settings.json", {"enabledMcpjsonServers": ["evil"]}, False, True),
    # the repository's own settings files approve nothing until the folder's trust dialog was accepted
    (".claude/settings.json", {"enableAllProjectMcpServers": True}, False, False),
    (".claude/settings.local.json", {"enabledMcpjsonServers": ["evil"]}, False, False),
    (".claude/settings.local.json", {"enabledMcpjsonServers": ["evil"]}, True, True),
])
def test_claude_code_approval_is_read_where_the_user_keeps_it(cloned, where, document, dialog, approved):
    home, project, _ = cloned
    plant(project, "claude-code", "evil", ["node", "server.js"])
    mine = {"hasTrustDialogAccepted": dialog}
    if where == "~/.claude.json":
        mine.update(document)
    else:
        path = (home / where[2:]) if where.startswith("~/") else project / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document))
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): mine}}))
    entry = _entries(_layout(home, project))[("claude-code", "evil")]
    assert entry.trust.state == ("approved" if approved else "not-approved"), entry.trust
    assert entry.launchable is approved


@pytest.mark.parametrize("projects, trusted", [
    ({"REPO": "trusted"}, True),
    ({"PARENT": "trusted"}, False),                 # a trusted folder does not trust a repository cloned in it
    ({"REPO": "untrusted"}, False),
    ({"PARENT": "trusted", "REPO": "untrusted"}, False),
    ({}, False),
])
def test_codex_reads_a_project_config_only_in_a_trusted_project(cloned, projects, trusted):
    home, project, _ = cloned
    plant(project, "codex-cli", "evil", ["node", "server.js"])
    paths = {"REPO": project, "PARENT": project.parent}
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("".join(
        f"[projects.{_toml_string(str(paths[k]))}]\ntrust_level = \"{v}\"\n" for k, v in projects.items()))
    entry = _entries(_layout(home, project))[("codex-cli", "evil")]
    assert entry.launchable is trusted and entry.trust.state == ("approved" if trusted else "not-approved")


def _codex_trusts(home: Path, folder: Path) -> None:
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(f"[projects.{_toml_string(str(folder))}]\ntrust_level = \"trusted\"\n")


def test_codex_trust_reaches_a_subfolder_of_the_trusted_repository_only(cloned):
    home, project, _ = cloned
    _codex_trusts(home, project)
    sub, nested = project / "sub", project / "vendor" / "evil"
    sub.mkdir()
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)  # a repository cloned inside the trusted one
    for folder in (sub, nested):
        plant(folder, "codex-cli", "evil", ["node", "server.js"])
    assert _entries(_layout(home, sub))[("codex-cli", "evil")].launchable
    refused = _entries(_layout(home, nested))[("codex-cli", "evil")]
    assert not refused.launchable and f"trusting {project.resolve()} does not trust" in refused.trust.reason


def test_codex_trust_of_a_main_checkout_covers_its_worktrees_not_a_forged_git_file(cloned, tmp_path):
    home, project, _ = cloned
    _codex_trusts(home, project)
    subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "init"], check=True)
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(project), "worktree", "add", "-q", str(linked)], check=True)
    forged = tmp_path / "forged"
    forged.mkdir()  # names the trusted checkout's worktree admin dir, which does not name it back
    (forged / ".git").write_text(f"gitdir: {project / '.git' / 'worktrees' / 'linked'}\n")
    for folder in (linked, forged):
        plant(folder, "codex-cli", "evil", ["node", "server.js"])
    assert _entries(_layout(home, linked))[("codex-cli", "evil")].launchable
    assert not _entries(_layout(home, forged))[("codex-cli", "evil")].launchable


@pytest.mark.parametrize("enabled, rules, trusted", [
    (True, {"REPO": "TRUST_FOLDER"}, True),
    (True, {"CHILD": "TRUST_PARENT"}, True),           # "trust parent folder" chosen in a subfolder
    (True, {"PARENT": "TRUST_FOLDER", "REPO": "DO_NOT_TRUST"}, False),
    (True, {}, False),
    (False, {"REPO": "TRUST_FOLDER"}, False),          # folder trust off: nothing records a choice
])
def test_gemini_project_settings_count_only_in_a_trusted_folder(cloned, enabled, rules, trusted):
    home, project, _ = cloned
    plant(project, "gemini-cli", "evil", ["node", "server.js"])
    paths = {"REPO": project, "PARENT": project.parent, "CHILD": project / "sub"}
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": enabled}}}))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(paths[k]): v for k, v in rules.items()}))
    entry = _entries(_layout(home, project))[("gemini-cli", "evil")]
    assert entry.launchable is trusted


@pytest.mark.parametrize("client, reference", [
    ("claude-code", "${SECRET_TOKEN}"), ("claude-code", "${SECRET_TOKEN:-fallback}"), ("kiro", "${SECRET_TOKEN}"),
    ("gemini-cli", "$SECRET_TOKEN"), ("gemini-cli", "${SECRET_TOKEN}"), ("vscode", "${env:SECRET_TOKEN}"),
    ("cursor", "${env:SECRET_TOKEN}"),
])
@pytest.mark.parametrize("opted", [False, True])
def test_an_unapproved_entry_pulls_nothing_from_the_callers_environment(cloned, client, reference, opted):
    home, project, _ = cloned
    plant(project, client, "evil", ["node", f"--key={reference}", "https://x.example/" + reference])
    secret = "caller-secret-value-0123456789"
    entry = _entries(_layout(home, project, {"SECRET_TOKEN": secret}, opted))[(client, "evil")]
    if opted:  # the control: with the opt-in the same reference does expand, as the client would
        assert entry.launchable and secret in entry.launch_argv[1]
    else:
        assert not entry.launchable and entry.env_values == {} and entry.secret_values == []
        assert secret not in repr(vars(entry)), "a caller's value reached an unapproved entry"


def test_codex_bearer_token_variable_is_not_read_for_an_untrusted_project(cloned):
    home, project, _ = cloned
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text('[mcp_servers.evil]\nurl = "https://x.example/mcp"\n'
                                                   'bearer_token_env_var = "SECRET_TOKEN"\n')
    secret = "caller-secret-value-0123456789"
    entry = _entries(_layout(home, project, {"SECRET_TOKEN": secret}))[("codex-cli", "evil")]
    assert not entry.launchable and secret not in repr(vars(entry))
    opted = _entries(_layout(home, project, {"SECRET_TOKEN": secret}, True))[("codex-cli", "evil")]
    assert opted.header_values == {"Authorization": f"Bearer {secret}"}


def test_with_the_opt_in_expansion_follows_the_decision(cloned):
    home, project, _ = cloned
    plant(project, "claude-code", "evil", ["node", "--key=${SECRET_TOKEN}"])
    entry = _entries(_layout(home, project, {"SECRET_TOKEN": "caller-secret-value"}, opted=True))[("claude-code", "evil")]
    assert entry.sandboxed and entry.launch_argv == ("node", "--key=caller-secret-value")


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize("client", ["claude-code", "vscode", "codex-cli"])
def test_with_the_opt_in_a_project_server_runs_in_the_sandbox(cloned, client):
    home, project, markers = cloned
    for name in ("well_behaved.py", "_mcp.py"):  # a project's own server is a file inside it
        shutil.copy(FIXTURE_SERVERS / name, project / name)
    plant(project, client, "local", ["python3", "well_behaved.py"])
    done = run_audit(["--single", "--json", "--trust-project"], project, home, timeout=300)
    row = _servers(report_of(done.stdout))[(client, "local")]
    assert row["status"] == "measured" and row["trust"]["state"] == "opted-in", row
    assert any("under sandbox isolation" in n for n in row["notes"]), row["notes"]
    assert done.returncode == 0


@pytest.mark.slow
@needs_bwrap
def test_with_the_opt_in_a_hostile_server_writes_nothing_on_the_host(cloned):
    home, project, markers = cloned
    plant(project, "claude-code", "evil", _marker_argv(markers / "m"))
    plant(project, "cursor", "evil2", ["python3", "-c", "open('planted', 'w').close()"])
    run_audit(["--single", "--json", "--trust-project"], project, home, timeout=300)
    assert not (markers / "m").exists() and not (project / "planted").exists()


def test_a_project_file_named_with_config_is_consent(cloned):
    home, project, _ = cloned
    path = plant(project, "claude-code", "named", ["node", "server.js"])
    unnamed = _entries(_layout(home, project))[("claude-code", "named")]
    files = discovery.discover(_layout(home, project), [path])
    named = next(e for f in files for e in f.entries if e.name == "named")
    assert not unnamed.launchable and named.launchable and named.trust is None


@pytest.mark.parametrize("client, files", [
    # the user's files, written inside the repository instead: the audit reads them from HOME only
    ("claude-code", {".claude.json": {"projects": {"REPO": {"hasTrustDialogAccepted": True,
                                                          "enableAllProjectMcpServers": True}}},
                     "home/.claude.json": {"projects": {"REPO": {"enableAllProjectMcpServers": True}}},
                     ".claude/settings.json": {"enableAllProjectMcpServers": True}}),
    ("codex-cli", {".codex/config.toml": '[projects."REPO"]\ntrust_level = "trusted"\n'}),
    ("gemini-cli", {".gemini/trustedFolders.json": {"REPO": "TRUST_FOLDER"},
                    ".gemini/settings.json": {"security": {"folderTrust": {"enabled": False}}}}),
])
def test_a_repository_cannot_approve_its_own_servers(cloned, client, files):
    home, project, _ = cloned
    for relative, content in files.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content)
        path.write_text(text.replace("REPO", str(project)))
    if client == "codex-cli":  # the server beside the self-trusting table, in the same file
        with open(project / ".codex" / "config.toml", "a") as handle:
            handle.write('[mcp_servers.evil]\ncommand = "node"\nargs = ["server.js"]\n')
    elif client == "gemini-cli":
        settings = project / ".gemini" / "settings.json"
        settings.write_text(json.dumps({**json.loads(settings.read_text()),
                                        "mcpServers": {"evil": {"command": "node", "args": ["server.js"]}}}))
    else:
        plant(project, client, "evil", ["node", "server.js"])
    entry = _entries(_layout(home, project))[(client, "evil")]
    assert not entry.launchable and entry.trust.state == "not-approved", entry.trust


def test_an_opted_in_entry_never_shows_a_secret_folder_or_a_home(tmp_path, monkeypatch):
    """``--trust-project`` shows the entry's working folder, but never a secret folder, a home or
    a folder holding one: a config naming ``~/.ssh`` as its ``cwd`` shows nothing."""
    from types import SimpleNamespace

    from harness.audit.measuring import _vouched

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".aws").mkdir()
    (home / "proj").mkdir()
    monkeypatch.setenv("HOME", str(home))
    opted = SimpleNamespace(sandboxed=True)
    for cwd in (home / ".ssh", home / ".aws", home, tmp_path):
        assert _vouched(opted, str(cwd)) == (), cwd
    assert _vouched(opted, str(home / "proj")) == (str((home / "proj").resolve()),)
    assert _vouched(SimpleNamespace(sandboxed=False), str(home / "proj")) == ()
    (tmp_path / "dotfiles" / "aws").mkdir(parents=True)  # ~/.config/gh kept elsewhere: named, it is the secret one
    (home / ".config").mkdir()
    (home / ".config" / "gh").symlink_to(tmp_path / "dotfiles" / "aws", target_is_directory=True)
    assert _vouched(opted, str(home / ".config" / "gh")) == ()
