"""Cursor: ``~/.cursor/mcp.json`` (global) and ``<cwd>/.cursor/mcp.json`` (project).

Documentation: cursor.com/docs/context/mcp (§Configuration locations, §Config interpolation),
confirmed on 2026-11-30 through the search tool's copies of it and of pages quoting it (the
first-party page itself was not in the corpus).

Entry keys under ``mcpServers``: ``type`` (``stdio``, ``sse``, ``streamable-http``), ``command``,
``args``, ``env``, ``url``, ``headers``. Interpolation: ``${env:NAME}``, ``${userHome}``,
``${workspaceFolder}``, ``${workspaceFolderBasename}``, ``${pathSeparator}``/``${/}``. Per-tool
toggles live in Cursor's UI, not in the file, so no tool filter is read.
"""

from __future__ import annotations

from harness.audit.clients._common import Candidate, Layout, Shape, add_map
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
