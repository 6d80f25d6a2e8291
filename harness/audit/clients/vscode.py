"""VS Code: the user profile's ``mcp.json`` and ``<cwd>/.vscode/mcp.json`` (``servers``). Source: ``DOCS``.

``${input:…}`` values are never in hand; ``envFile`` is not read.
"""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
from harness.audit.model import ConfigFile
from harness.audit.readers import brief

CLIENT = "vscode"
NAME = "VS Code"
DOCS = "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration"
READ_ON = "2026-11-30"
SHAPE = Shape(syntax="env-colon")


def candidates(layout: Layout) -> list[Candidate]:
    return [Candidate(layout.user_data("Code", "User", "mcp.json"), "user"),
            Candidate(layout.cwd / ".vscode" / "mcp.json", "workspace")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    add_map(cfile, document, "servers", SHAPE, layout, layout.cwd if cfile.scope == "workspace" else None)
    servers = document.get("servers") if isinstance(document, dict) else None
    for entry in cfile.entries:
        raw = servers.get(entry.name) if isinstance(servers, dict) else None
        if isinstance(raw, dict) and "envFile" in raw:
            entry.unevaluated.append(f"envFile: {brief(raw['envFile'], 200)} (its values are not read)")
