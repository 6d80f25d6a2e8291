"""Sandboxed launches work when the harness's cache folder, or a folder in it, is reached through a
symbolic link (``~/.cache`` on another disk): the sandbox is shown each folder at its real path.

Real servers at the pins of ``tests/probe/test_real_servers.py``; the package caches stay the warm ones
(linked in), the resolver's and working folders are new."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.probe import isolation
from harness.util import user_cache

MEMORY = "npx -y @modelcontextprotocol/server-memory@2026.8.31"
TIME = 'uvx --with "mcp<2" mcp-server-time==2026.8.18'

pytestmark = pytest.mark.slow


def _layout(tmp_path: Path, how: str) -> Path:
    """A cache folder reached the way ``how`` says; returns what ``$MCP_CONTEXT_COST_CACHE`` names."""
    real = tmp_path / "disk" / "cache"
    real.mkdir(parents=True)
    (real / "sandbox").symlink_to(user_cache.folder("sandbox"), target_is_directory=True)
    if how == "root":
        (tmp_path / "cache").symlink_to(real, target_is_directory=True)
        return tmp_path / "cache"
    for name in ("resolver", "work"):
        (tmp_path / "disk" / name).mkdir()
        (real / name).symlink_to(tmp_path / "disk" / name, target_is_directory=True)
    return real


@pytest.mark.parametrize("command", [MEMORY, TIME], ids=["npx", "uvx"])
@pytest.mark.parametrize("how", ["root", "folders"])
def test_sandboxed_measure_through_links(tmp_path: Path, how: str, command: str) -> None:
    if not isolation._bwrap_works():
        pytest.skip("bubblewrap cannot create a sandbox here")
    env = dict(os.environ, **{user_cache.ENV: str(_layout(tmp_path, how))})
    done = subprocess.run([sys.executable, "-m", "harness.cli", "measure", "--command", command, "--name", "linked",
                           "--isolation", "sandbox", "--out", str(tmp_path / "out"), "--timeout", "120"],
                          capture_output=True, text=True, env=env, timeout=600)
    record = json.loads((tmp_path / "out" / "results" / "linked" / "measurement.json").read_text())
    assert done.returncode == 0 and record["status"] == "measured", (record["status"], done.stderr[-800:])
    assert record["toolCount"] > 0


def test_a_folder_is_its_real_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "link"))
    assert user_cache.folder("sandbox") == (tmp_path / "real" / "sandbox").resolve()
    assert user_cache.root() == tmp_path / "link"  # as named; only the folders in it are resolved
