"""Gemini CLI: ``~/.gemini/settings.json`` (user) and ``<cwd>/.gemini/settings.json`` (project).

Documentation: github.com/google-gemini/gemini-cli docs/tools/mcp-server.md (§Configuration
Properties) and geminicli.com/docs/cli/configuration (§Settings files), read through the search
tool on 2026-11-30.

Entry keys under ``mcpServers``: ``command``/``args``/``env``/``cwd`` (stdio), ``url`` (SSE),
``httpUrl`` (Streamable HTTP), ``headers``, ``includeTools`` (allowlist), ``excludeTools``
("takes precedence over includeTools"). ``env`` values may reference ``$VAR`` or ``${VAR}``.
The top-level ``mcp.excluded`` list of server names is read as disabling those entries and
``mcp.allowed``, when set, as disabling every entry it does not name (the configuration page's
global MCP settings). Project settings override user settings.
"""

from __future__ import annotations

from harness.audit.clients._common import Candidate, Layout, Shape, add_map
from harness.audit.model import HTTP, SSE, ConfigFile

CLIENT = "gemini-cli"
NAME = "Gemini CLI"
DOCS = "https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md"
READ_ON = "2026-11-30"
SHAPE = Shape(type_key=None, url_keys=(("httpUrl", HTTP), ("url", SSE)), include="includeTools",
              exclude="excludeTools", cwd_key="cwd", syntax="dollar")


def candidates(layout: Layout) -> list[Candidate]:
    return [Candidate(layout.home / ".gemini" / "settings.json", "user"),
            Candidate(layout.cwd / ".gemini" / "settings.json", "project")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    add_map(cfile, document, "mcpServers", SHAPE, layout, layout.cwd if cfile.scope == "project" else None)
    mcp = document.get("mcp") if isinstance(document, dict) else None
    if not isinstance(mcp, dict):
        return
    excluded, allowed = mcp.get("excluded"), mcp.get("allowed")
    for entry in cfile.entries:
        if isinstance(excluded, list) and entry.name in excluded:
            entry.disabled = "listed in mcp.excluded"
        elif isinstance(allowed, list) and entry.name not in allowed:
            entry.disabled = "not listed in mcp.allowed"
