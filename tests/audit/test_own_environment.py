"""A client config's env values reach the server and nothing else: never the harness's own
process environment, from which the harness reads its own settings (``bwrap`` on ``PATH``,
``MCP_CONTEXT_COST_CACHE``, ``MCP_CONTEXT_COST_MAX_*``): a project's ``"env": {"PATH": "./bin:…"}``
must not choose which ``bwrap`` runs on the host.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys

import pytest

from harness.audit import discovery, identity, measuring
from harness.audit.clients.config_format import Layout
from harness.probe.measure import measure
from tests.audit.conftest import approve_project, run_audit
from tests.conftest import FIXTURE_SERVERS

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing: scripts/setup.sh installs it")
KEY = "cfg-key-Zq81Vw3Ln6Rt0Yp5"  # what needs_api_key.py accepts as a real key


def _project(tmp_path, servers: dict):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    approve_project(home, project)
    return home, project


@pytest.mark.slow
@needs_bwrap
def test_a_config_cannot_choose_the_sandbox_launcher_or_its_cache(tmp_path):
    evil = tmp_path / "repo-bin"
    evil.mkdir()
    ran = tmp_path / "bwrap-ran-on-the-host"
    (evil / "bwrap").write_text(f"#!/bin/sh\necho \"$@\" >> {ran}\nexec /usr/bin/env -i bwrap \"$@\"\n")
    (evil / "bwrap").chmod(0o755)
    planted_cache = tmp_path / "cache-chosen-by-the-config"
    env = {"PATH": f"{evil}:/usr/bin:/bin", "MCP_CONTEXT_COST_CACHE": str(planted_cache), "HOME": str(tmp_path),
           "TMPDIR": str(tmp_path)}
    home, project = _project(tmp_path, {"s": {"command": "/usr/bin/python3", "args": ["-c", "import sys; sys.exit(1)"],
                                              "env": env}})
    done = run_audit(["--isolation", "sandbox", "--single", "--json", "--timeout", "20"], project, home,
                     env={"MCP_CONTEXT_COST_CACHE": str(tmp_path / "own-cache")}, timeout=180)
    assert "startup-failure" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert not ran.exists(), "the config's bwrap ran on the host"
    assert not planted_cache.exists(), "the config chose where the sandbox's writable cache lives"
    assert not list(tmp_path.glob("mcp-context-cost-*")), "the config chose where working directories live"


@pytest.mark.slow
def test_a_config_cannot_change_the_harness_limits_but_its_server_gets_its_values(tmp_path):
    # In host mode (the default: as the client runs it) the server still receives every value;
    # the harness's own limits stay its own (a 10-byte message limit would fail every reply).
    script = [sys.executable, str(FIXTURE_SERVERS / "needs_api_key.py")]
    env = {"EXAMPLE_API_KEY": KEY, "MCP_CONTEXT_COST_MAX_MESSAGE_BYTES": "10", "MCP_CONTEXT_COST_MAX_PAGES": "-1"}
    home, project = _project(tmp_path, {"s": {"command": script[0], "args": script[1:], "env": env}})
    done = run_audit(["--single", "--json", "--timeout", "30"], project, home, timeout=180)
    report = json.loads(done.stdout)
    statuses = [row["status"] for f in report["configs"] for row in f["servers"]]
    assert statuses == ["measured"], done.stdout[-3000:] + done.stderr[-2000:]


def test_no_config_value_ever_enters_the_harness_environment(tmp_path):
    # Several servers measured at once, with values for the same names that disagree; while each
    # is measured, the harness's own environment is the one it started with.
    script = [sys.executable, str(FIXTURE_SERVERS / "needs_api_key.py")]
    servers = {f"s{i}": {"command": script[0], "args": [*script[1:], f"--n={i}"],
                         "env": {"EXAMPLE_API_KEY": f"{KEY}-{i}", "PATH": f"/nowhere-{i}:{os.environ['PATH']}",
                                 "MCP_CONTEXT_COST_CACHE": f"/nowhere-{i}"}} for i in range(3)}
    home, project = _project(tmp_path, servers)
    layout = Layout(home=home.resolve(), cwd=project.resolve(), platform="linux", environ={},
                    system_root=tmp_path / "sys")
    groups = identity.group([e for f in discovery.discover(layout) for e in f.entries])
    before, seen = dict(os.environ), []

    async def watching(target, **kwargs):
        seen.append(dict(os.environ))
        measurement = await measure(target, **kwargs)
        seen.append(dict(os.environ))
        return measurement

    outcomes = asyncio.run(measuring.measure_all(groups, measuring.Secrets([]), dual=False, timeout=30,
                                                 progress=lambda line: None, measurer=watching))
    assert len(seen) == 6 and all(environ == before for environ in seen)
    assert [o.status for o in outcomes.values()] == ["measured"] * 3  # each server got its own key
