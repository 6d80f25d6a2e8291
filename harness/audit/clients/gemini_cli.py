"""Gemini CLI: ``~/.gemini/settings.json`` and ``<cwd>/.gemini/settings.json``, with its tool filters and
``mcp.excluded``/``mcp.allowed``. Source: ``DOCS`` and gemini-cli docs/tools/mcp-server.md.
"""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
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
