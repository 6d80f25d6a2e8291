"""Kiro: ``~/.kiro/settings/mcp.json`` and ``<cwd>/.kiro/settings/mcp.json`` (the workspace wins). Source: ``DOCS``."""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
from harness.audit.model import ConfigFile

CLIENT = "kiro"
NAME = "Kiro"
DOCS = "https://kiro.dev/docs/mcp/configuration"
READ_ON = "2026-11-30"
SHAPE = Shape(disabled_key="disabled", exclude="disabledTools", syntax="claude")


def candidates(layout: Layout) -> list[Candidate]:
    return [Candidate(layout.home / ".kiro" / "settings" / "mcp.json", "user"),
            Candidate(layout.cwd / ".kiro" / "settings" / "mcp.json", "workspace")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    add_map(cfile, document, "mcpServers", SHAPE, layout, layout.cwd if cfile.scope == "workspace" else None)
