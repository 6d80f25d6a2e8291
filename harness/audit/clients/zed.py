"""Zed: ``context_servers`` in ``~/.config/zed/settings.json`` and ``<cwd>/.zed/settings.json`` (JSONC).

Source: ``DOCS``. Extension servers run inside Zed and are listed as not measurable.
"""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Context, Layout, Shape, build_entry, not_launchable, table
from harness.audit.model import EXTENSION, ConfigFile

CLIENT = "zed"
NAME = "Zed"
DOCS = "https://zed.dev/docs/ai/mcp"
READ_ON = "2026-11-30"
SHAPE = Shape(type_key=None, enabled_key="enabled")


def candidates(layout: Layout) -> list[Candidate]:
    user = layout.user_data("Zed", "settings.json") if layout.platform == "win32" else \
        layout.home / ".config" / "zed" / "settings.json"
    return [Candidate(user, "user"), Candidate(layout.cwd / ".zed" / "settings.json", "project")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    ctx = Context(CLIENT, cfile.path, cfile.scope, layout, layout.cwd if cfile.scope == "project" else None)
    for name, raw in table(document, "context_servers", cfile):
        where = f"context_servers.{name}"
        if isinstance(raw, dict) and raw.get("source") == "extension":
            cfile.entries.append(not_launchable(str(name), ctx, EXTENSION, "provided by a Zed extension: the file "
                                                "describes no launch, so its cost is not measured here"))
            continue
        cfile.entries.append(build_entry(str(name), _flatten(raw), SHAPE, ctx, where))


def _flatten(raw: object) -> object:
    """The older ``command: {path, args, env}`` form as the flat form (other values unchanged)."""
    if isinstance(raw, dict) and isinstance(raw.get("command"), dict):
        command = raw["command"]
        flat = {k: v for k, v in raw.items() if k != "command"}
        flat["command"] = command.get("path")
        for key in ("args", "env"):
            if key in command:
                flat[key] = command[key]
        return flat
    return raw
