"""Cline: ``cline_mcp_settings.json``.

Documentation: docs.cline.bot/mcp/configuring-mcp-servers (§Editing Configuration Files, §STDIO
Transport, §SSE/Streamable HTTP), read through the search tool on 2026-11-30. The page opens the
file from the UI without naming its path; the paths below are the extension's global storage in VS
Code's user directory (``…/Code/User/globalStorage/saoudrizwan.claude-dev/settings/``) and the
Cline CLI's ``~/.cline/data/settings/``, confirmed only through third-party pages.

Entry keys under ``mcpServers``: ``command``, ``args``, ``env``, ``url``, ``type`` (``stdio``,
``sse``, ``streamableHttp``), ``headers``, ``disabled``, ``autoApprove``.
"""

from __future__ import annotations

from harness.audit.clients._common import Candidate, Layout, Shape, add_map
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
