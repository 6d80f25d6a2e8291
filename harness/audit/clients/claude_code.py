"""Claude Code: ``~/.claude.json`` (user and local scope), ``<cwd>/.mcp.json``, the platform's ``managed-mcp.json``.

Keys and precedence: docs/AUDIT.md, "What it reads". Source: ``DOCS`` and code.claude.com/docs/en/managed-mcp.
"""

from __future__ import annotations

from pathlib import Path

from harness.audit.clients.config_format import Candidate, Context, Layout, Shape, entries_from_map
from harness.audit.model import HTTP, SSE, ConfigFile
from harness.audit.trust import managed_dir

CLIENT = "claude-code"
NAME = "Claude Code"
DOCS = "https://code.claude.com/docs/en/mcp"
READ_ON = "2026-11-30"
SHAPE = Shape(url_keys=(("url", HTTP),), always_load=True, syntax="claude",
              type_map={"stdio": "stdio", "http": HTTP, "streamable-http": HTTP, "sse": SSE})
SCOPE_ORDER = ("local", "project", "user")  # highest precedence first (§Scope hierarchy and precedence)


def candidates(layout: Layout) -> list[Candidate]:
    """The three documented MCP config locations, user file first."""
    return [Candidate(layout.home / ".claude.json", "user"),
            Candidate(layout.cwd / ".mcp.json", "project"),
            Candidate(managed_dir(layout) / "managed-mcp.json", "managed")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    """Fill ``cfile.entries`` (and ``cfile.notes`` for file-level problems) from ``document``."""
    if not isinstance(document, dict):
        cfile.notes.append("the top level is not an object")
        return
    if cfile.scope == "user":
        _add(cfile, document.get("mcpServers"), "user", layout, None, "mcpServers")
        key, project = _project(document, layout.cwd)
        if project is not None:
            _add(cfile, project.get("mcpServers") if isinstance(project, dict) else None, "local", layout,
                 None, f"projects[{key}].mcpServers")
        return
    if cfile.scope == "managed" and not isinstance(document.get("mcpServers"), dict):
        cfile.notes.append("mcpServers is missing or not an object")
    workspace = layout.cwd if cfile.scope == "project" else None
    _add(cfile, document.get("mcpServers"), cfile.scope, layout, workspace, "mcpServers")


def _add(cfile: ConfigFile, servers: object, scope: str, layout: Layout, workspace, where: str) -> None:
    ctx = Context(CLIENT, cfile.path, scope, layout, workspace)
    entries, problems = entries_from_map(servers, SHAPE, ctx, where)
    cfile.entries += entries
    cfile.notes += problems


def _project(document: dict, cwd: Path) -> tuple[str | None, object]:
    """The ``projects`` key whose resolved path is ``cwd`` (``(None, None)`` when none is)."""
    projects = document.get("projects")
    if not isinstance(projects, dict):
        return None, None
    target = _resolved(cwd)
    for key, value in projects.items():
        if isinstance(key, str) and key and _resolved(Path(key)) == target:
            return key, value
    return None, None


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return path
