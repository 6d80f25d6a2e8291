"""Under ``sandbox`` isolation a server sees none of the host's credentials."""

from __future__ import annotations

import shutil

import pytest

from harness.core.jsparse import parse
from harness.probe import isolation
from harness.probe.measure import measure_sync
from harness.probe.sandbox import bwrap_argv, docker_argv, docker_image_for, env_args, env_file_text, server_cache
from harness.probe.target import Target
from tests.conftest import FIXTURE_SERVERS

SENTINEL = "ghp_SENTINEL0hostvalue0do0not0leak"

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing: scripts/setup.sh installs it")


def _seen(measurement) -> dict:
    tool = next(t for t in measurement.capture.tools if t["name"] == "what_i_can_see")
    return parse(tool["description"].removeprefix("SEEN "))


@needs_bwrap
def test_sandboxed_server_finds_no_host_secret(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SENTINEL)
    (home / ".gitconfig").write_text(f"[user]\n\ttoken = {SENTINEL}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GITHUB_TOKEN", SENTINEL)
    target = Target(name="reads-secrets", command=f"python3 {FIXTURE_SERVERS / 'reads_secrets.py'}",
                    env=("GITHUB_TOKEN",), timeout_seconds=30)

    host = _seen(measure_sync(target, isolation="host", dual=False))
    assert host["ssh_dir_exists"] is True and host["GITHUB_TOKEN"] == SENTINEL  # the probe itself works

    sandboxed = measure_sync(target, isolation="sandbox", dual=False)
    seen = _seen(sandboxed)
    assert SENTINEL not in repr(sandboxed.capture.tools)
    assert seen["ssh_dir_exists"] is False and seen["ssh_files"] == []
    assert seen["gitconfig_first_line"] is None
    assert seen["GITHUB_TOKEN"] == "mcp-context-cost-dummy-github_token"
    assert seen["proc1_GITHUB_TOKEN"] in (None, "mcp-context-cost-dummy-github_token")
    assert seen["home"] == "/home/mcp"


def test_auto_mode_is_recorded():
    mode = isolation.resolve_mode("auto")
    assert mode in ("sandbox", "host")
    described = isolation.describe(mode)
    assert described["mode"] == mode and described["arch"] and described["note"]
    with pytest.raises(ValueError):
        isolation.resolve_mode("vm")


@needs_bwrap
def test_bwrap_argv_hides_homes_and_keeps_values_off_the_command_line(tmp_path):
    argv = bwrap_argv(["/usr/bin/node", "server.js"], tmp_path, tmp_path / "cache", 7)
    assert argv[1:3] == ["--args", "7"] and ["--cap-drop", "ALL"] == argv[argv.index("--cap-drop"):][:2]
    assert ["--tmpfs", "/root"] == argv[argv.index("/root") - 1: argv.index("/root") + 1]
    assert argv[argv.index("--") + 1:] == ["/usr/bin/node", "server.js"]
    assert argv.index("--tmpfs") < argv.index("--ro-bind")  # homes hidden before prefixes are bound
    assert ["--bind", str(tmp_path / "cache" / "npm"), "/home/mcp/.npm"] == argv[argv.index(str(tmp_path / "cache" / "npm")) - 1:][:3]
    assert ["--ro-bind", "/dev/null", "/etc/shadow"] == argv[argv.index("/etc/shadow") - 2: argv.index("/etc/shadow") + 1]

    data = env_args({"PATH": "/usr/bin:/root/bin", "API_KEY": SENTINEL, "HOME": "/root"})
    parts = data.split(b"\0")[:-1]
    assert parts[0] == b"--clearenv" and data.endswith(b"\0")
    pairs = {parts[i + 1]: parts[i + 2] for i in range(1, len(parts), 3)}
    assert all(parts[i] == b"--setenv" for i in range(1, len(parts), 3))
    assert pairs == {b"PATH": b"/usr/bin", b"API_KEY": SENTINEL.encode(), b"HOME": b"/home/mcp", b"TMPDIR": b"/tmp"}
    with pytest.raises(ValueError):
        env_args({"PATH": "/usr/bin", "X": "a\0b"})


def test_each_server_gets_its_own_cache_keyed_by_name_and_command(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path))
    memory = server_cache("memory", "npx -y @modelcontextprotocol/server-memory@2026.8.31")
    assert memory.parent == tmp_path / "sandbox" / "servers" and memory.name.startswith("memory-")
    assert memory == server_cache("memory", "npx -y @modelcontextprotocol/server-memory@2026.8.31")
    assert memory != server_cache("memory", "npx -y @modelcontextprotocol/server-memory@2026.9.1")
    assert memory != server_cache("evil", "npx -y @modelcontextprotocol/server-memory@2026.8.31")


def test_docker_argv_passes_names_only():
    argv = docker_argv(["npx", "-y", "pkg"], ["API_KEY"], docker_image_for("npx"))
    assert argv[:4] == ["docker", "run", "--rm", "-i"]
    assert ["-e", "API_KEY"] == argv[argv.index("-e"): argv.index("-e") + 2]
    assert any(a.startswith("--memory=") for a in argv) and "--cap-drop=ALL" in argv
    assert argv[-4:] == [docker_image_for("npx"), "npx", "-y", "pkg"]
    assert docker_image_for("uvx").startswith("ghcr.io/astral-sh/uv:")


def test_docker_reads_values_from_an_env_file_not_its_own_environment():
    argv = docker_argv(["npx", "-y", "pkg"], ["API_KEY"], docker_image_for("npx"), env_file="/dev/fd/5")
    assert ["--env-file", "/dev/fd/5"] == argv[argv.index("--env-file"):][:2] and "-e" not in argv
    assert env_file_text({"API_KEY": SENTINEL, "PUPPETEER_SKIP_DOWNLOAD": "1"}) == \
        f"API_KEY={SENTINEL}\nPUPPETEER_SKIP_DOWNLOAD=1\n".encode()
    with pytest.raises(ValueError) as refused:
        env_file_text({"API_KEY": SENTINEL + "\nINJECTED=1"})
    assert "API_KEY" in str(refused.value) and SENTINEL not in str(refused.value)
