"""Cursor: ``~/.cursor/mcp.json`` and ``<cwd>/.cursor/mcp.json``. Source: ``DOCS``, confirmed through pages quoting it.
"""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
from harness.audit.model import ConfigFile

CLIENT = "cursor"
NAME = "Cursor"
DOCS = "https://cursor.com/docs/context/mcp"
READ_ON = "2026-11-30"
SHAPE = Shape(syntax="env-colon")


def candidates(layout: Layout) -> list[Candidate]:
    return [Candidate(layout.home / ".cursor" / "mcp.json", "user"),
            Candidate(layout.cwd / ".cursor" / "mcp.json", "project")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    add_map(cfile, document, "mcpServers", SHAPE, layout, layout.cwd if cfile.scope == "project" else None)
