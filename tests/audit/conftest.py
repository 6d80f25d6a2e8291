"""Helpers for the audit tests: a temporary HOME and project laid out from the fixtures, and
running the CLI in a subprocess with that HOME and working directory (never the real ones)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.audit.clients.config_format import Layout
from harness.util import schemas
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "audit"


@pytest.fixture
def machine(tmp_path: Path) -> Layout:
    """A fake machine: ``home``, ``project`` (the cwd) and ``sys`` (the system root for managed
    files), filled from ``tests/fixtures/audit``; ``~/.claude.json`` written with the project's
    real path under ``projects``."""
    home, project, system = tmp_path / "home", tmp_path / "project", tmp_path / "sys"
    shutil.copytree(FIXTURES / "home", home)
    shutil.copytree(FIXTURES / "project", project)
    system.mkdir()
    claude = {
        "numStartups": 3,
        "mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
                       "shared": {"command": "user-version"}},
        "projects": {str(project) + "/.": {"mcpServers": {"local-only": {"command": "local-server"}},
                                           "enableAllProjectMcpServers": True},
                     "/somewhere/else": {"mcpServers": {"elsewhere": {"command": "not-this-one"}}}},
    }
    (home / ".claude.json").write_text(json.dumps(claude))
    environ = {"CURSOR_DOCS_KEY": "cursor-key-value-1234", "DB_CONNECTION_STRING": "postgres://u:p@h/db",
               "API_KEY": "claude-api-key-5678"}
    return Layout(home=home, cwd=project, platform="linux", environ=environ, system_root=system, trust_project=True)


def approve_project(home: Path, project: Path) -> None:
    """Record the user's approval of every project ``.mcp.json`` server in the user's own Claude
    Code settings (``~/.claude/settings.json`` ``enableAllProjectMcpServers``): a file the
    repository cannot write, and one that adds no config file to the report."""
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    document["enableAllProjectMcpServers"] = True
    path.write_text(json.dumps(document), encoding="utf-8")


def run_audit(args: list[str], cwd: Path, home: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``mcp-context-cost audit ARGS`` in a subprocess with ``HOME=home`` and ``cwd``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ENABLE_TOOL_SEARCH", "CLAUDE_CODE_",
                                                                         "ANTHROPIC_BASE_URL"))}
    environ.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")})
    environ.pop("CODEX_HOME", None)
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "harness.cli", "audit", *args], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=timeout)


def report_of(text: str) -> dict:
    """Parse a JSON report and validate it against its schema."""
    report = json.loads(text)
    schemas.check("audit-report", report)
    return report
