"""Windsurf: ``~/.codeium/windsurf/mcp_config.json``.

Documentation: docs.windsurf.com/windsurf/cascade/mcp, confirmed on 2026-11-30 through pages quoting
it (the first-party page was not in the search corpus).

Entry keys under ``mcpServers``: ``command``, ``args``, ``env``, ``serverUrl`` (remote; ``url`` is
also accepted by some builds and read the same way), ``headers``, ``disabled``. Interpolation:
``${env:VAR}``.
"""

from __future__ import annotations

from harness.audit.clients._common import Candidate, Layout, Shape, add_map
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
