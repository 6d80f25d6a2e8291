"""Claude Desktop: ``claude_desktop_config.json``.

Documentation: the MCP project's user guide for Claude Desktop (modelcontextprotocol.io, "Connect
to local MCP servers", formerly /quickstart/user) — not in the search corpus; the paths and keys
were confirmed on 2026-11-30 through pages that quote it (playwright.dev/mcp/clients/claude-desktop,
the confluentinc/mcp-confluent and stadiamaps setup guides citing that page).

* macOS: ``~/Library/Application Support/Claude/claude_desktop_config.json``;
* Windows: ``%APPDATA%\\Claude\\claude_desktop_config.json``;
* Linux: ``~/.config/Claude/claude_desktop_config.json`` — Anthropic ships no Linux build; the
  path is where community builds read it and is looked at for completeness (not confirmed on a
  first-party page).

Entry keys: ``command``, ``args``, ``env`` under ``mcpServers``. No variable expansion is
documented, so values are taken literally.
"""

from __future__ import annotations

from harness.audit.clients._common import Candidate, Layout, Shape, add_map
from harness.audit.model import ConfigFile

CLIENT = "claude-desktop"
NAME = "Claude Desktop"
DOCS = "https://modelcontextprotocol.io/docs/develop/connect-local-servers"
READ_ON = "2026-11-30"
SHAPE = Shape(type_key=None, url_keys=(), headers=None)


def candidates(layout: Layout) -> list[Candidate]:
    return [Candidate(layout.user_data("Claude", "claude_desktop_config.json"), "user")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    add_map(cfile, document, "mcpServers", SHAPE, layout)
