"""Continue: ``mcpServers`` in ``~/.continue/config.yaml`` and the block files of ``<cwd>/.continue/mcpServers/``.

Source: ``DOCS``. ``${{ secrets.… }}`` values are never in hand.
"""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path

from harness.audit.clients.config_format import MAX_ENTRIES, Candidate, Context, Layout, Shape, build_entry
from harness.audit.model import ConfigFile

CLIENT = "continue"
NAME = "Continue"
DOCS = "https://docs.continue.dev/customize/deep-dives/mcp"
READ_ON = "2026-11-30"
SHAPE = Shape(syntax="continue")
JSON_SHAPE = Shape()
MAX_BLOCK_FILES = 100
MAX_LISTED = 10_000  # directory entries looked at: the folder is the repository's, of any size


def candidates(layout: Layout) -> list[Candidate]:
    found = [Candidate(layout.home / ".continue" / "config.yaml", "user", "yaml")]
    folder = layout.cwd / ".continue" / "mcpServers"
    try:
        with os.scandir(folder) as listing:
            names = [e.name for e in islice(listing, MAX_LISTED)]
    except OSError:
        names = []
    files = sorted(folder / n for n in names if Path(n).suffix.lower() in (".yaml", ".yml", ".json"))
    for path in files[:MAX_BLOCK_FILES]:
        found.append(Candidate(path, "workspace", "json" if path.suffix.lower() == ".json" else "yaml"))
    return found


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    workspace = layout.cwd if cfile.scope == "workspace" else None
    ctx = Context(CLIENT, cfile.path, cfile.scope, layout, workspace)
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if servers is None:
        return
    if isinstance(servers, dict):  # a JSON file in the Claude/Cursor format
        for name, raw in list(servers.items())[:MAX_ENTRIES]:
            cfile.entries.append(build_entry(str(name), raw, JSON_SHAPE, ctx, f"mcpServers.{name}"))
        return
    if not isinstance(servers, list):
        cfile.notes.append("mcpServers is neither a list nor an object")
        return
    for index, raw in enumerate(servers[:MAX_ENTRIES]):
        name = raw.get("name") if isinstance(raw, dict) else None
        label = name if isinstance(name, str) and name else f"mcpServers[{index}]"
        entry = build_entry(label, raw, SHAPE, ctx, f"mcpServers[{index}]")
        if not (isinstance(name, str) and name):
            entry.problems.append(f"mcpServers[{index}].name: missing or not a string")
        cfile.entries.append(entry)
