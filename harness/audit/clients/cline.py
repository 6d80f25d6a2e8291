"""Cline: ``cline_mcp_settings.json`` in the VS Code extension's storage and the CLI's ``~/.cline/data/settings/``.

Source: ``DOCS``; the page names no path, so both paths are confirmed only through third-party pages.
"""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
from harness.audit.model import ConfigFile

CLIENT = "cline"
NAME = "Cline"
DOCS = "https://docs.cline.bot/mcp/configuring-mcp-servers"
READ_ON = "2026-11-30"
SHAPE = Shape(disabled_key="disabled")
STORAGE = ("Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")


def candidates(layout: Layout) -> list[Candidate]:
    return [Candidate(layout.user_data(*STORAGE), "user"),
            Candidate(layout.home / ".cline" / "data" / "settings" / "cline_mcp_settings.json", "user")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    add_map(cfile, document, "mcpServers", SHAPE, layout)
