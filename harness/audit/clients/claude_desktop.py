"""Claude Desktop: ``claude_desktop_config.json`` in the platform's app-data folder, values taken literally.

Source: ``DOCS``, confirmed through pages quoting it; the Linux path (community builds) is unconfirmed.
"""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
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
