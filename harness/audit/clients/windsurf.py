"""Windsurf: ``~/.codeium/windsurf/mcp_config.json``. Source: ``DOCS``, confirmed through pages quoting it."""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
from harness.audit.model import HTTP, ConfigFile

CLIENT = "windsurf"
NAME = "Windsurf"
DOCS = "https://docs.windsurf.com/windsurf/cascade/mcp"
READ_ON = "2026-11-30"
SHAPE = Shape(url_keys=(("serverUrl", HTTP), ("url", HTTP)), disabled_key="disabled", syntax="env-colon")


def candidates(layout: Layout) -> list[Candidate]:
    return [Candidate(layout.home / ".codeium" / "windsurf" / "mcp_config.json", "user")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    add_map(cfile, document, "mcpServers", SHAPE, layout)
