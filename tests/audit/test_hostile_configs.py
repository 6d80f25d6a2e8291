"""``audit`` against hostile and broken configs (a review as an attacker): every case here was a
real failure before its fix — a crash that lost the whole report, a secret printed, a gate that
passed on a session it could not see, a terminal or CI log acting on untrusted text.

Kinds, each with several variants: URLs the probe cannot parse; header names and values no
client can send; JSON output carrying bidi/C1 characters, ``##[`` and lone surrogates; a config
that cannot be read inside a session; parse errors quoting the file; literal secrets beside an
unevaluated reference."""

from __future__ import annotations

import json
import os
import sys

import pytest

from harness.audit import discovery, readers, sessions
from harness.audit.clients.config_format import Layout
from tests.audit.conftest import approve_project, report_of, run_audit
from tests.conftest import FIXTURE_SERVERS

WELL = [sys.executable, str(FIXTURE_SERVERS / "well_behaved.py")]


def _machine(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    approve_project(home, project)
    return home, project


def _layout(home, project) -> Layout:
    return Layout(home=home.resolve(), cwd=project.resolve(), platform="linux", environ={},
                  system_root=home.parent / "sys")


def _entries(home, project) -> dict:
    return {e.name: e for f in discovery.discover(_layout(home, project)) for e in f.entries}


def _write_mcp(project, servers: dict) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


BAD_URLS = ["http://[::1", "http://[::1/mcp", "http://host:99999/mcp", "http://host:abc/mcp", "https://",
            "http:///mcp", "http://exa mple.com/mcp", "http://host/m\ncp"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_url_no_client_can_use_is_a_malformed_entry(tmp_path, url):
    home, project = _machine(tmp_path)
    _write_mcp(project, {"remote": {"type": "http", "url": url}, "ok": {"type": "http", "url": "http://[::1]:9/mcp"}})
    entries = _entries(home, project)
    assert any(p.startswith("mcpServers.remote.url: ") for p in entries["remote"].problems), entries["remote"].problems
    assert not entries["remote"].launchable
    assert entries["ok"].problems == [] and entries["ok"].launch_url == "http://[::1]:9/mcp"


@pytest.mark.slow
def test_an_unparseable_url_no_longer_crashes_the_audit(tmp_path):
    home, project = _machine(tmp_path)
    _write_mcp(project, {"v6": {"type": "http", "url": "http://[::1"}, "port": {"url": "http://h:70000/"},
                         "well": {"command": WELL[0], "args": WELL[1:]}})
    done = run_audit(["--single", "--json"], project, home)
    assert done.returncode == 0, done.stderr  # was 70: ValueError: Invalid IPv6 URL, and no report at all
    rows = {s["name"]: s for s in report_of(done.stdout)["configs"][0]["servers"]}
    assert rows["v6"]["status"] == rows["port"]["status"] == "malformed" and rows["well"]["status"] == "measured"


@pytest.mark.parametrize("headers, field", [
    ({"X-A\r\nInjected": "value-1234"}, "headers.X-A\r\nInjected"),
    ({"X-B": "v\r\nX-Evil: crlf-SECRET-5678"}, "headers.X-B"),
    ({"X-C": "nul\x00-SECRET-9012"}, "headers.X-C"),
    ({"Bad Name": "value-3456"}, "headers.Bad Name"),
    ({"": "value-7890"}, "headers."),
])
def test_a_header_no_client_can_send_is_malformed_not_unreachable(tmp_path, headers, field):
    home, project = _machine(tmp_path)
    _write_mcp(project, {"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": headers}})
    entry = _entries(home, project)["remote"]
    assert any(p.startswith(f"mcpServers.remote.{field}: ") for p in entry.problems), entry.problems
    assert not entry.launchable
    assert not any("SECRET" in p for p in entry.problems)  # the value is never quoted


HOSTILE_NAMES = ["bidi\u202etxt.exe", "c1\x9b31m", "##[error]legacy", "lone\ud800surrogate", "zw\u200b\u2066x",
                 "::error title=x::pwned"]


@pytest.mark.slow
@pytest.mark.parametrize("to_file", [False, True])
def test_the_json_report_is_inert_text_and_parses_back_to_the_same_names(tmp_path, to_file):
    home, project = _machine(tmp_path)
    _write_mcp(project, {name: {"command": "definitely-not-installed-xyz", "args": [str(i)]}
                         for i, name in enumerate(HOSTILE_NAMES)} | {"well": {"command": WELL[0], "args": WELL[1:]}})
    out = tmp_path / "r.json"
    done = run_audit(["--single", "--json"] + ([str(out)] if to_file else []), project, home)
    assert done.returncode == 0, done.stderr  # a lone surrogate was exit 70: UnicodeEncodeError
    text = out.read_text(encoding="utf-8") if to_file else done.stdout
    for char in ("\u202e", "\x9b", "\u200b", "\u2066", "##["):
        assert char not in text, repr(char)
    report = report_of(text)
    assert [s["name"] for s in report["configs"][0]["servers"]] == HOSTILE_NAMES + ["well"]


def _claude_user(home, servers: dict) -> None:
    (home / ".claude.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("breakage", ["not-json", "directory", "symlink-loop", "not-utf8"])
def test_a_member_config_that_cannot_be_read_refuses_the_session_total(tmp_path, breakage):
    home, project = _machine(tmp_path)
    _claude_user(home, {"well": {"command": WELL[0], "args": WELL[1:]}})
    target = project / ".mcp.json"
    if breakage == "not-json":
        target.write_text('{"mcpServers": {"x": ')
    elif breakage == "directory":
        target.mkdir()
    elif breakage == "symlink-loop":
        os.symlink("loop", target)
        os.symlink(".mcp.json", project / "loop")
    else:
        target.write_bytes(b'{"mcpServers": {"\xff": {}}}')
    files = discovery.discover(_layout(home, project))
    [session] = [s for s in sessions.compose(files) if s.client == "claude-code"]
    assert session.refused and ".mcp.json" in session.refused
    done = run_audit(["--single", "--budget", "100000", "--json"], project, home)
    report = report_of(done.stdout)
    [claude] = [s for s in report["sessions"] if s["client"] == "claude-code"]
    assert claude["total"] is None and ".mcp.json" in claude["refused"]
    assert done.returncode == 1 and not report["gates"][0]["passed"]  # was: "every request carries 215 tokens", passed
    unreadable = next(c for c in report["configs"] if c["path"] == ".mcp.json")
    assert unreadable["total"]["floor"] and unreadable["total"]["display"] == "≥ 0"


def test_an_unreadable_file_of_a_client_without_precedence_refuses_its_session_too(tmp_path):
    home, project = _machine(tmp_path)
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"well": {"command": WELL[0]}}}))
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text("{ nope")
    [session] = [s for s in sessions.compose(discovery.discover(_layout(home, project))) if s.client == "cursor"]
    assert session.refused and ".cursor/mcp.json" in session.refused


SECRET = "sk-live-PARSE-SECRET-0123456789"


@pytest.mark.parametrize("kind, text", [
    ("yaml", f"extensions:\n  x:\n    envs:\n      KEY = {SECRET}\n    cmd: [a\n"),
    ("yaml", f"[default]\naws_secret_access_key = {SECRET}\n"),
    ("yaml", f"a: 1\nb: '{SECRET}\n"),
    ("json", f'{{"mcpServers": {{"x": {{"env": {{"KEY": {SECRET}}}}}}}}}'),
    ("json", f"{SECRET}"),
    ("toml", f'[mcp_servers.x]\nenv = {{ KEY = {SECRET} }}\n'),
])
def test_a_parse_error_names_the_place_and_never_quotes_the_file(kind, text):
    parse = {"yaml": readers.parse_yaml, "json": readers.parse_json, "toml": readers.parse_toml}[kind]
    with pytest.raises(readers.ConfigError) as caught:
        parse(text, "/p/config")
    message = str(caught.value)
    assert message.startswith("/p/config: not valid ") and "line" in message
    for part in (SECRET, SECRET[8:20], "aws_secret", "KEY ="):
        assert part not in message, message


def test_a_yaml_config_with_a_secret_on_its_broken_line_prints_nothing_of_it(tmp_path):
    home, project = _machine(tmp_path)
    (project / "team.yaml").write_text(f"mcpServers:\n  x:\n    env: {{API_KEY: {SECRET}\n")
    done = run_audit(["--single", "--no-discover", "--config", "team.yaml", "--markdown", str(tmp_path / "r.md")],
                     project, home)
    assert "team.yaml: not valid YAML" in " ".join(done.stdout.split())
    for text in (done.stdout, done.stderr, (tmp_path / "r.md").read_text()):
        assert SECRET not in text and SECRET[8:20] not in text


@pytest.mark.slow
def test_literal_secrets_beside_an_unevaluated_reference_appear_nowhere(tmp_path):
    home, project = _machine(tmp_path)
    secrets = ["sk-ARGV-BESIDE-REF-0123456789", "QUERYBESIDEREF0123456789", "PWBESIDEREF0123456789"]
    _write_mcp(project, {
        "argv": {"command": "srv", "args": ["--api-key", secrets[0], "--dir", "${AUDIT_NOT_SET_1}"]},
        "query": {"type": "http", "url": "https://${AUDIT_NOT_SET_2}/mcp?api_key=" + secrets[1]},
        "userinfo": {"type": "http", "url": f"https://user:{secrets[2]}@${{AUDIT_NOT_SET_3}}/mcp"},
        "well": {"command": WELL[0], "args": WELL[1:]},
    })
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    done = run_audit(["--single", "--json", str(out), "--markdown", str(md)], project, home)
    rows = {s["name"]: s for s in report_of(out.read_text())["configs"][0]["servers"]}
    assert rows["argv"]["status"] == rows["query"]["status"] == "unevaluated"
    text = run_audit(["--single"], project, home).stdout
    for body in (done.stdout, done.stderr, out.read_text(), md.read_text(), text, "".join(text.split())):
        for secret in secrets:
            assert secret not in body and secret[4:18] not in body


@pytest.mark.slow
@pytest.mark.timeout(120)  # the failure this guards against is a hang
def test_a_bug_measuring_one_server_lets_the_others_finish_then_names_it(tmp_path):
    # gather() would cancel the other measurements mid-flight when one raised; cancelling a probe in
    # the middle of a remote request leaves asyncio.run's cleanup waiting forever.
    import asyncio

    from harness.audit import identity, measuring
    from harness.probe.measure import measure

    home, project = _machine(tmp_path)
    slow = [sys.executable, str(FIXTURE_SERVERS / "slow_start.py"), "--delay", "1"]
    _write_mcp(project, {"boom": {"command": "true"}, "slow": {"command": slow[0], "args": slow[1:]}})
    groups = identity.group([e for e in _entries(home, project).values()])
    lines: list[str] = []

    async def measurer(target, **kwargs):
        if target.command == "true":
            raise ValueError("a bug, sk-BUG-SECRET-0123456789")
        return await measure(target, **kwargs)

    redactor = measuring.Secrets(["sk-BUG-SECRET-0123456789"])
    with pytest.raises(RuntimeError, match=r"^measuring 'boom' failed: ValueError: a bug, \[redacted\]$"):
        asyncio.run(measuring.measure_all(groups, redactor, dual=False, timeout=30, progress=lines.append,
                                          measurer=measurer))
    assert len(lines) == 1 and lines[0].startswith("[1/2] slow: measured — ")  # it finished, uncancelled


@pytest.mark.parametrize("argv, secret", [
    (["srv", "sk-proj-POSITIONAL0123456789abcdefXYZ"], "sk-proj-POSITIONAL0123456789abcdefXYZ"),
    (["srv", "-k", "sk-ant-api03-SHORTOPT0123456789abcdef"], "sk-ant-api03-SHORTOPT0123456789abcdef"),
    (["srv", "ghp_" + "A1b2C3d4E5" * 4], "ghp_" + "A1b2C3d4E5" * 4),
    (["srv", "--slack", "xoxb-1234567890-SLACKBOTTOKENabc"], "xoxb-1234567890-SLACKBOTTOKENabc"),
    (["srv", "--aws=AKIAIOSFODNN7EXAMPLE"], "AKIAIOSFODNN7EXAMPLE"),
    (["srv", "--config={\"key\":\"glpat-GITLABtoken0123456789ab\"}"], "glpat-GITLABtoken0123456789ab"),
])
def test_a_credential_by_its_shape_is_a_secret_wherever_it_stands_in_argv(tmp_path, argv, secret):
    from harness.audit import measuring

    home, project = _machine(tmp_path)
    _write_mcp(project, {"srv": {"command": argv[0], "args": argv[1:]}})
    redactor = measuring.redactor_for(list(_entries(home, project).values()))
    shown = redactor.text(" ".join(argv) + f" error: unrecognized arguments: {secret}")
    assert secret not in shown and secret[-12:] not in shown and "[redacted]" in shown


@pytest.mark.parametrize("word", ["sk-short", "task-runner-for-everyone-and-all", "skeleton-key-generator-thing",
                                  "--disk-cache-size-in-megabytes", "ghp_short"])
def test_ordinary_arguments_are_not_taken_for_credentials(word):
    from harness.probe.server_env import argv_secrets

    assert argv_secrets(["srv", word]) == []


@pytest.mark.slow
def test_no_line_of_the_text_report_starts_a_workflow_command(tmp_path):
    # A rich table row starts with its first cell — the server's name — at column 0, so a config key
    # "::error title=x::pwned" began a line a GitHub runner reads as a workflow command.
    home, project = _machine(tmp_path)
    names = ["::error title=x::pwned", "::add-mask::x", "  ::warning::indented", "::stop-commands::tok"]
    _write_mcp(project, {name: {"command": WELL[0], "args": WELL[1:] + ["--tools", str(i + 1)]}
                         for i, name in enumerate(names)} | {"x" * 30 + "::notice::folded": {"command": "nope-xyz"}})
    done = run_audit(["--single"], project, home)
    assert done.returncode == 0, done.stderr
    for stream in (done.stdout, done.stderr):
        assert not [line for line in stream.splitlines() if line.lstrip().startswith("::")]
    assert "\\x3a:error title=x::pwned" in done.stdout  # still there, visibly
