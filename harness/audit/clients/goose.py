"""Goose: the ``extensions`` map of ``~/.config/goose/config.yaml``; built-in extensions are listed as not measurable.

Source: ``DOCS``. ``env_keys`` values live in goose's secret store, never in hand here.
"""

from __future__ import annotations

from harness.audit.clients.config_format import Candidate, Context, Layout, Shape, build_entry, not_launchable, table
from harness.audit.model import BUILTIN, HTTP, SSE, STDIO, ConfigFile

CLIENT = "goose"
NAME = "Goose"
DOCS = "https://block.github.io/goose/docs/guides/config-files"
READ_ON = "2026-11-30"
SHAPE = Shape(command="cmd", env="envs", url_keys=(("uri", HTTP),), enabled_key="enabled",
              type_map={"stdio": STDIO, "streamable_http": HTTP, "sse": SSE}, env_name_lists=("env_keys",))


def candidates(layout: Layout) -> list[Candidate]:
    path = layout.user_data("Block", "goose", "config", "config.yaml") if layout.platform == "win32" else \
        layout.home / ".config" / "goose" / "config.yaml"
    return [Candidate(path, "user", "yaml")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    ctx = Context(CLIENT, cfile.path, cfile.scope, layout)
    for name, raw in table(document, "extensions", cfile):
        if isinstance(raw, dict) and raw.get("type") in ("builtin", "platform"):
            entry = not_launchable(str(name), ctx, BUILTIN, f"a goose {raw.get('type')} extension: it runs inside "
                                   "goose, so its cost is not measured here")
            entry.disabled = "enabled: false" if raw.get("enabled") is False else None
        else:
            entry = build_entry(str(name), raw, SHAPE, ctx, f"extensions.{name}")
            _available_tools(entry, raw, name)
            for key in (raw.get("env_keys") or []) if isinstance(raw, dict) else []:
                if isinstance(key, str) and key not in entry.env_values:
                    entry.unevaluated.append(f"env_keys: {key} (value in goose's secret store)")
        cfile.entries.append(entry)


def _available_tools(entry, raw, name) -> None:
    tools = raw.get("available_tools") if isinstance(raw, dict) else None
    if tools in (None, []):
        return
    if isinstance(tools, list) and all(isinstance(t, str) for t in tools):
        entry.include_tools = tuple(tools)
    else:
        entry.problems.append(f"extensions.{name}.available_tools: not a list of tool names")
