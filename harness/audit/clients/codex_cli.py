"""Codex CLI: ``[mcp_servers.<name>]`` in ``~/.codex/config.toml`` (or ``$CODEX_HOME``) and a trusted project's
``.codex/config.toml``. Source: ``DOCS`` and openai/codex docs/config.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.audit.clients.config_format import Candidate, Context, Layout, Shape, build_entry, table
from harness.audit.model import HTTP, ConfigFile

CLIENT = "codex-cli"
NAME = "Codex CLI"
DOCS = "https://developers.openai.com/codex/mcp"
READ_ON = "2026-11-30"
SHAPE = Shape(type_key=None, headers="http_headers", enabled_key="enabled", include="enabled_tools",
              exclude="disabled_tools", cwd_key="cwd", env_name_lists=("env_vars",), url_keys=(("url", HTTP),))


def candidates(layout: Layout) -> list[Candidate]:
    environ = layout.environ if layout.environ is not None else os.environ
    home = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else layout.home / ".codex"
    return [Candidate(home / "config.toml", "user", "toml"),
            Candidate(layout.cwd / ".codex" / "config.toml", "project", "toml")]


def parse(document: object, cfile: ConfigFile, layout: Layout) -> None:
    ctx = Context(CLIENT, cfile.path, cfile.scope, layout, layout.cwd if cfile.scope == "project" else None)
    for name, raw in table(document, "mcp_servers", cfile):
        entry = build_entry(str(name), raw, SHAPE, ctx, f"mcp_servers.{name}")
        token_var = raw.get("bearer_token_env_var") if isinstance(raw, dict) else None
        if isinstance(token_var, str) and token_var:
            environ = layout.environ if layout.environ is not None else os.environ
            entry.header_names += ("Authorization",)
            if token_var in environ and not entry.blocked:  # no caller value for an unapproved project
                entry.header_values["Authorization"] = f"Bearer {environ[token_var]}"
                entry.secret_values.append(environ[token_var])
            else:
                entry.unevaluated.append(f"bearer_token_env_var: {token_var} (not set here)")
        cfile.entries.append(entry)
