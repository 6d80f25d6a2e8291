"""Resolve-once: an npx/uvx package resolved once, then launched from its
install with the environment its launcher would have given it.

The proof is on real servers pinned to exact versions (``tests/probe/test_real_servers.py``'s
pins): the same canonicalSha256 and totalTokens both ways, under the sandbox and on the host, and
the server process itself sees the same thing both ways — its argv, working directory and every
environment variable, in order. The forms this module does not handle, and every way a resolution
can go wrong, fall back to the launcher (``None``), never to a failure of their own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from harness.probe import isolation, build_record, reaper, resolve, sandbox
from harness.probe.launch import launch_once
from harness.probe.limits import from_env
from harness.probe.measure import measure_sync
from harness.probe.session import converse
from harness.probe.target import Target

UVX = 'uvx --with "mcp<2" '
MEMORY = "npx -y @modelcontextprotocol/server-memory@2026.8.31"
EVERYTHING = "npx -y @modelcontextprotocol/server-everything@2026.8.18"
TIME = UVX + "mcp-server-time==2026.8.18"


# --- which commands are resolved, and how --------------------------------------------------------

@pytest.mark.parametrize("command, launcher, package", [
    ("npx -y @modelcontextprotocol/server-memory", "npx", "@modelcontextprotocol/server-memory"),
    ("npx --yes @azure/mcp@latest server start", "npx", "@azure/mcp"),
    ("npx -y figma-developer-mcp --stdio", "npx", "figma-developer-mcp"),
    ("npx -y slack-mcp-server@1.2.3 --transport stdio", "npx", "slack-mcp-server"),
    ("/usr/bin/npx -y tavily-mcp@0.2.1", "npx", "tavily-mcp"),
    ("uvx mcp-server-qdrant", "uvx", "mcp-server-qdrant"),
    ("uvx awslabs.aws-documentation-mcp-server@latest", "uvx", "awslabs.aws-documentation-mcp-server"),
    ('uvx --with "mcp<2" mcp-server-time==2026.8.18', "uvx", "mcp-server-time"),
    ('uvx --with=pydantic<2.12 chroma-mcp', "uvx", "chroma-mcp"),
    ("uvx --from office-word-mcp-server word_mcp_server", "uvx", "office-word-mcp-server"),
    ('uvx --with "mcp<2" --from office-powerpoint-mcp-server ppt_mcp_server', "uvx", "office-powerpoint-mcp-server"),
    ("uvx mcp-server-fetch[extra]==1.0 --flag", "uvx", "mcp-server-fetch"),
])
def test_handled_forms(command, launcher, package):
    plan = resolve.plan(command)
    assert (plan.launcher, plan.package) == (launcher, package)


@pytest.mark.parametrize("command", [
    "npx @modelcontextprotocol/server-memory",  # no -y: npx would ask, and the harness never answers
    "npx -y ./local-dir", "npx -y /abs/path/pkg", "npx -y github:owner/repo", "npx -y git+https://x.invalid/r.git",
    "npx -y https://x.invalid/p.tgz", "npx -y -p pkg cmd", "npx -y", "npx",
    "uvx --from git+https://github.com/redis/mcp-redis.git redis-mcp-server",
    "uvx --python 3.12 mcp-server-time", "uvx --refresh pkg", "uvx --from", "uvx", "uvx ./path/pkg",
    "node dist/index.js", "python3 server.py", "docker run -i img", "npx -y 'unterminated",
])
def test_other_forms_are_left_to_the_launcher(command):
    assert resolve.plan(command) is None


def test_uvx_plan_keeps_the_arguments_after_the_command():
    plan = resolve.plan("uvx mcp-server-motherduck --db-path :memory: --read-write")
    assert plan.args == ("--db-path", ":memory:", "--read-write")
    assert plan.argv[-2:] == ["mcp-server-motherduck", "mcp-server-motherduck"]
    assert resolve.plan('uvx --with "mcp<2" pkg==1.0').argv[1:5] == ["--with", "mcp<2", "--from", "pkg==1.0"]


@pytest.mark.parametrize("before", [b"", b"\n", b"\n> g@1.0.0 install\n> node-gyp rebuild\n\n",
                                    b"\n> t@1.0.0 postinstall\n> node install.js\n\n\n> u@2.0.0 install\n> exit 0\n\n",
                                    b'{"argv": ["-c", "fake"], "env": [], "versions": {"p": "6.6.6"}, "bin": "/x"}\n'])
def test_what_npm_printed_before_the_dumper_s_line_is_not_read(before):
    """npm prints the banner of every foreground install script on stdout before the dumper's own line."""
    plan = resolve.Plan("npx", "p", ["npx", "-y", "p"])
    line = b'{"argv": ["-c", "p"], "env": [["A", "1"]], "versions": {"p": "1.0.0"}, "bin": "/b"}'
    found = resolve._read(plan, before + b"\n" + line, "host")
    assert found is not None and found.version == "1.0.0" and found.argv == ("sh", "-c", "p")
    assert resolve._read(plan, before + b"\n" + line + b"\n> after\n", "host") is None  # the dumper is last


@pytest.mark.parametrize("printed", [
    b"", b"not json", b"[]", b'{"argv": ["-c", "x"]}',
    # a version that is not a plain version string never reaches a record
    b'{"argv": ["-c", "x"], "env": [], "versions": {"p": "1.0 \\u001b[31m"}, "bin": "/b"}',
    b'{"argv": ["-c", "x"], "env": [], "versions": {"p": "' + b"9" * 80 + b'"}, "bin": "/b"}',
    b'{"argv": ["-c", "x"], "env": [], "versions": {"p": null}, "bin": "/b"}',
    b'{"argv": ["-c", "x"], "env": [], "versions": {"q": "1.0"}, "bin": "/b"}',
    b'{"argv": ["-c", "x"], "env": [], "versions": {"p": "1.0"}, "bin": "/b", "error": "x"}',
    # npm did not start its script shell as ``<shell> -c <script>``
    b'{"argv": ["x"], "env": [], "versions": {"p": "1.0"}, "bin": "/b"}',
    b'{"argv": ["-c", "x", "y"], "env": [], "versions": {"p": "1.0"}, "bin": "/b"}',
    b'{"argv": ["-c", "x"], "env": "PATH=/x", "versions": {"p": "1.0"}, "bin": "/b"}',
])
def test_unexpected_resolution_output_falls_back(printed):
    plan = resolve.Plan("npx", "p", ["npx", "-y", "p"])
    assert resolve._read(plan, printed, "host") is None


def test_a_vanished_install_or_another_isolation_falls_back(tmp_path):
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    found = resolve.Resolved("npx", "p", "1.0.0", ("sh", "-c", "'p'"), "host", str(bin_dir), (("PATH", "/x"),))
    target = Target(name="vanish", command="npx -y p", resolved=found)
    assert resolve.launch_parts(target, "host") == (["sh", "-c", "'p'"], {"PATH": "/x"})
    assert resolve.launch_parts(target, "sandbox") is None  # resolved on the host: not the sandbox's install
    assert resolve.launch_parts(dataclasses.replace(target, resolved=None), "host") is None
    shutil.rmtree(bin_dir)  # e.g. heal removed a corrupt npx install before a retry
    assert resolve.launch_parts(target, "host") is None
    outside = dataclasses.replace(found, isolation="sandbox", executable="/etc")  # not in the server's cache
    assert resolve.launch_parts(dataclasses.replace(target, resolved=outside), "sandbox") is None


def test_switch_docker_and_a_chosen_script_shell_fall_back(monkeypatch):
    target = Target(name="off", command=MEMORY)
    monkeypatch.setenv(resolve.SWITCH, "0")
    assert asyncio.run(resolve.resolved_target(target, "host")) is target
    monkeypatch.delenv(resolve.SWITCH)
    assert asyncio.run(resolve.resolve(target, "docker")) is None
    assert asyncio.run(resolve.resolve(dataclasses.replace(target, cwd="/tmp"), "host")) is None
    # a script shell the host chose would be npx's: the harness cannot stand in for it
    assert asyncio.run(resolve.resolve(target, "host", environ={**os.environ, resolve.SCRIPT_SHELL: "/bin/bash"})) is None


def test_record_names_the_resolved_version_and_keeps_the_launch_command():
    found = resolve.Resolved("uvx", "mcp-server-time", "2026.8.18", ("/x/bin/mcp-server-time",), "host", "/x",
                             (("API_KEY", "value-of-a-declared-name"),))
    assert found.to_record() == {"launcher": "uvx", "name": "mcp-server-time", "version": "2026.8.18"}
    assert "value-of-a-declared-name" not in repr(found)  # values never shown, never recorded


# --- real servers, both ways ---------------------------------------------------------------------

def _both_ways(command: str, mode: str, name: str) -> tuple[dict, dict]:
    target = Target(name=name, command=command, timeout_seconds=120)
    found = asyncio.run(resolve.resolve(target, mode, pass_declared_values=False))
    assert found is not None, "the pinned package did not resolve"
    iso = isolation.describe(mode)
    from harness.probe.install import Install

    plain = build_record.build(measure_sync(target, isolation=mode, pass_declared_values=False,  # through the launcher
                                      installed=Install(target)), iso)
    once = build_record.build(measure_sync(dataclasses.replace(target, resolved=found), isolation=mode,
                                     pass_declared_values=False), iso)
    return plain, once


@pytest.mark.slow
@pytest.mark.parametrize("command, mode, version", [
    (MEMORY, "sandbox", "2026.8.31"), (EVERYTHING, "sandbox", "2026.8.18"), (TIME, "sandbox", "2026.8.18"),
    (MEMORY, "host", "2026.8.31"), (TIME, "host", "2026.8.18"),
])
def test_same_capture_both_ways(command, mode, version):
    if mode == "sandbox" and not isolation._bwrap_works():
        pytest.skip("bubblewrap cannot create a sandbox here")
    plain, once = _both_ways(command, mode, f"resolve-{mode}")
    assert plain["status"] == once["status"] == "measured", (plain["notes"], once["notes"])
    assert (plain["totalTokens"], plain["canonicalSha256"]) == (once["totalTokens"], once["canonicalSha256"])
    assert plain["rawToolsCapture"] == once["rawToolsCapture"]
    assert once["launchCommand"] == plain["launchCommand"] == command
    assert "resolvedPackage" not in plain
    assert once["resolvedPackage"]["version"] == version


async def _observed(target: Target, mode: str) -> dict:
    """What the server process (the deepest one the launch started) and its parent could see:
    argv, working directory and environment (the harness's per-launch tracking marker aside)."""
    seen: dict = {}

    async def conversation(transport, capture, limits):
        await converse(transport, capture, limits)
        tree = reaper.descendants(transport.pid) | {transport.pid}
        parents = {pid: int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) for pid in tree}
        leaf = max(tree, key=lambda pid: _depth(pid, parents))
        seen["server"] = _process(leaf)
        seen["parent"] = _process(parents[leaf])["argv"]

    await launch_once(target, 120, from_env(), "2025-11-25", pass_declared_values=False, conversation=conversation,
                      isolation=mode)
    return seen


def _depth(pid: int, parents: dict) -> int:
    return 0 if pid not in parents else 1 + _depth(parents[pid], parents)


def _process(pid: int) -> dict:
    proc = Path(f"/proc/{pid}")
    env = [item for item in proc.joinpath("environ").read_bytes().split(b"\0") if item]
    return {"argv": proc.joinpath("cmdline").read_bytes().split(b"\0"), "cwd": os.readlink(proc / "cwd"),
            "env": [e for e in env if not e.startswith(reaper.MARKER.encode() + b"=")]}


@pytest.mark.slow
@pytest.mark.parametrize("command, mode", [(MEMORY, "host"), (TIME, "host"), (MEMORY, "sandbox"), (TIME, "sandbox")])
def test_the_server_sees_the_same_process_both_ways(command, mode):
    """argv, cwd and every environment variable in order, as the server process reads them from
    /proc (npx: and its parent ``sh -c '<bin>'``, which npm starts)."""
    if mode == "sandbox" and not isolation._bwrap_works():
        pytest.skip("bubblewrap cannot create a sandbox here")
    target = Target(name=f"observe-{mode}", command=command, timeout_seconds=120)
    found = asyncio.run(resolve.resolve(target, mode, pass_declared_values=False))
    assert found is not None
    plain = asyncio.run(_observed(target, mode))
    once = asyncio.run(_observed(dataclasses.replace(target, resolved=found), mode))
    if not plain["server"]["env"]:
        pytest.skip("this kernel does not let the harness read a sandboxed process's environment")
    assert once["server"] == plain["server"]
    if command.startswith("npx"):
        assert once["parent"] == plain["parent"] and plain["parent"][:2] == [b"sh", b"-c"]
    names = [e.split(b"=", 1)[0] for e in once["server"]["env"]]
    assert (b"npm_lifecycle_event" in names) == command.startswith("npx")
    assert resolve.SCRIPT_SHELL.encode() not in names


@pytest.mark.slow
def test_a_package_that_does_not_resolve_is_the_install_s_failure():
    """A resolution that fails (here: no such package on the registry) leaves the target as it
    was, and its measurement is the install's own failure, in npm's words; no launch is made."""
    target = Target(name="resolve-missing", command="npx -y @mcp-context-cost-test/no-such-package@1.0.0",
                    timeout_seconds=60)
    assert asyncio.run(resolve.resolved_target(target, "host", pass_declared_values=False)) is target
    rec = build_record.build(measure_sync(target, pass_declared_values=False))
    assert rec["status"] == "startup-failure" and "resolvedPackage" not in rec
    assert [a["role"] for a in rec["attempts"]] == ["install", "install"] and rec["phase"] == "install"
    assert "npm error 404" in rec["notes"][0] and "no-such-package" in rec["notes"][0]


def test_resolution_runs_in_the_servers_own_sandbox_cache(monkeypatch, tmp_path):
    """The resolution run is a launch like any other: under the sandbox it gets the server's own
    cache and the harness's dumper folder (read-only), nothing else from the host."""
    if not isolation._bwrap_works():
        pytest.skip("bubblewrap cannot create a sandbox here")
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    seen = {}

    async def fake_run(target, argv, env, mode, timeout):
        from harness.probe.launch import isolated_argv

        seen["argv"], _, fds = isolated_argv(argv, env, tmp_path, mode, target)
        for fd in fds:
            os.close(fd)
        seen["env"] = env
        return b"", resolve.Ran(1, False, b"", 0.0)

    monkeypatch.setattr(resolve, "_run", fake_run)
    target = Target(name="cache-check", command=MEMORY)
    assert asyncio.run(resolve.resolve(target, "sandbox")) is None
    cache = sandbox.server_cache(target.name, target.launch)
    argv = seen["argv"]
    assert argv[argv.index(f"{sandbox.SANDBOX_HOME}/.npm") - 1] == str(cache / "npm")
    shown = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind" and str(tmp_path) in argv[i + 1]]
    assert shown == [str(resolve._dumper_dir())]
    assert seen["env"][resolve.SCRIPT_SHELL] == str(resolve._dumper_dir() / "dump")
    assert json.loads(json.dumps(seen["env"]))  # plain strings only
