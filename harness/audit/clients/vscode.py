"""VS Code: ``<cwd>/.vscode/mcp.json`` (workspace) and the user profile's ``mcp.json``.

Documentation: code.visualstudio.com/docs/copilot/reference/mcp-configuration (§Configuration
file, §Standard I/O servers, §HTTP and SSE servers, §Input variables), read through the search
tool on 2026-11-30. The page says "in your user profile" without a path; the default profile's
directory is VS Code's user-settings directory (``~/.config/Code/User`` on Linux,
``~/Library/Application Support/Code/User`` on macOS, ``%APPDATA%\\Code\\User`` on Windows), which
was not confirmed on that page.

Top level: ``servers`` (name → entry) and ``inputs``. Entry keys: ``type`` (``stdio``, ``http``,
``sse``), ``command``, ``args``, ``env``, ``envFile``, ``url``, ``headers``. Variables:
``${input:id}`` (prompted: never in hand here), ``${env:VAR}``, ``${workspaceFolder}``,
``${userHome}``. An ``envFile`` is not read (its values are not in the config): the entry says so.
"""

from __future__ import annotations

from harness.audit.clients._common import Candidate, Layout, Shape, add_map
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
