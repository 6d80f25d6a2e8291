"""Under ``sandbox`` isolation a server sees none of the host's credentials (issue #6)."""

from __future__ import annotations

import shutil

import pytest

from harness.core.jsparse import parse
from harness.probe import isolation
from harness.probe.measure import measure_sync
from harness.probe.sandbox import bwrap_argv, docker_argv, docker_image_for
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
    argv, env = bwrap_argv(["/usr/bin/node", "server.js"], tmp_path, {"PATH": "/usr/bin", "API_KEY": SENTINEL})
    assert SENTINEL not in " ".join(argv)
    assert env["API_KEY"] == SENTINEL and env["HOME"] == "/home/mcp"
    assert ["--tmpfs", "/root"] == argv[argv.index("/root") - 1: argv.index("/root") + 1]
    assert argv[argv.index("--") + 1:] == ["/usr/bin/node", "server.js"]
    assert argv.index("--tmpfs") < argv.index("--ro-bind")  # homes hidden before prefixes are bound


def test_docker_argv_passes_names_only():
    argv = docker_argv(["npx", "-y", "pkg"], ["API_KEY"], docker_image_for("npx"))
    assert argv[:4] == ["docker", "run", "--rm", "-i"]
    assert ["-e", "API_KEY"] == argv[argv.index("-e"): argv.index("-e") + 2]
    assert any(a.startswith("--memory=") for a in argv) and "--cap-drop=ALL" in argv
    assert argv[-4:] == [docker_image_for("npx"), "npx", "-y", "pkg"]
    assert docker_image_for("uvx").startswith("ghcr.io/astral-sh/uv:")
