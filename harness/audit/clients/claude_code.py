"""Claude Code: ``~/.claude.json``, ``<cwd>/.mcp.json`` and the platform's ``managed-mcp.json``.

Documentation: code.claude.com/docs/en/mcp (§Installation scopes, §Scope hierarchy and precedence,
§Environment variable expansion in ``.mcp.json``, §Exempt a server from deferral) and
code.claude.com/docs/en/managed-mcp (§Exclusive control with managed-mcp.json), read through the
search tool on 2026-11-30; the spec (methodology, "Who pays the number") read them 2026-09-06/09.

* user scope: ``~/.claude.json`` top-level ``mcpServers``;
* local scope: ``~/.claude.json`` ``projects[<path>].mcpServers`` where ``<path>`` is the current
  directory — matched on the resolved path, not the raw string (issue #12), so ``/repo/./x`` and a
  symlink to the project both match;
* project scope: ``<cwd>/.mcp.json`` ``mcpServers``, launched in the project directory;
* managed: ``/etc/claude-code/managed-mcp.json`` (Linux and WSL),
  ``/Library/Application Support/ClaudeCode/managed-mcp.json`` (macOS),
  ``C:\\Program Files\\ClaudeCode\\managed-mcp.json`` (Windows); same format as ``.mcp.json``.

Entry keys: ``type`` (``stdio``, ``http``, ``sse``; ``streamable-http`` is an alias of ``http``),
``command``/``args``/``env``, ``url``/``headers``, ``alwaysLoad``. Expansion: ``${VAR}`` and
``${VAR:-default}`` in command, args, env, url and headers. Precedence of one name across scopes:
local, then project, then user (``harness.audit.sessions``).
"""

from __future__ import annotations

from pathlib import Path

from harness.audit.clients._common import Candidate, Context, Layout, Shape, entries_from_map
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
