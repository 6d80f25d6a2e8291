"""The places Claude Code reads its tool-search variables and MCP policy from, each with its state and env names.

Public: ``Place``, ``shell_place``, ``settings_places``. Rule: docs/METHODOLOGY.md, "Where it is deferred away".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.audit import readers
from harness.audit.clients.config_format import Layout
from harness.audit.trust import managed_dir
from harness.audit.model import ABSENT, READ, UNREADABLE

SHELL, MANAGED, LOCAL, PROJECT, USER = "shell", "managed", "local", "project", "user"
MAX_DROP_INS = 100


@dataclass
class Place:
    """One place variables and lists are read from."""

    name: str
    tier: str
    state: str
    path: str | None = None
    env: dict = field(default_factory=dict, repr=False)  # name → JSON value; only names are published
    lists: dict = field(default_factory=dict, repr=False)  # the policy keys it sets, as written
    error: str | None = None

    def public(self) -> dict:
        """The place as a report prints it: name, tier, path, state, env names, error."""
        return {"name": self.name, "tier": self.tier, "path": self.path, "state": self.state,
                "envNames": sorted(self.env), "error": self.error}


def shell_place(environ=None) -> Place:
    """The shell: every variable of the audit's own environment (always ``read``)."""
    return Place("shell", SHELL, READ, env=dict(os.environ if environ is None else environ))


def settings_places(layout: Layout) -> list[Place]:
    """The settings places in precedence order (managed file, its drop-ins, local, project, user)."""
    base = managed_dir(layout)
    places = [_file("managed-settings.json", MANAGED, base / "managed-settings.json")]
    drop_ins = base / "managed-settings.d"
    try:
        names = sorted(p.name for p in drop_ins.iterdir() if p.suffix == ".json")[:MAX_DROP_INS]
    except OSError:
        names = []
    places += [_file(f"managed-settings.d/{n}", MANAGED, drop_ins / n) for n in names]
    places.append(_file(".claude/settings.local.json", LOCAL, layout.cwd / ".claude" / "settings.local.json"))
    places.append(_file(".claude/settings.json", PROJECT, layout.cwd / ".claude" / "settings.json"))
    places.append(_file("~/.claude/settings.json", USER, layout.home / ".claude" / "settings.json"))
    return places


def _file(name: str, tier: str, path: Path) -> Place:
    place = Place(name, tier, READ, path=str(path))
    try:
        document = readers.load(path, "json")
    except (FileNotFoundError, NotADirectoryError):
        place.state = ABSENT
        return place
    except readers.ConfigError as exc:
        place.state, place.error = UNREADABLE, str(exc)
        return place
    if not isinstance(document, dict):
        place.state, place.error = UNREADABLE, f"{path}: the top level is not an object"
        return place
    env = document.get("env", {})
    if not isinstance(env, dict):
        place.state, place.error = UNREADABLE, f"{path}: env is not an object"
        return place
    place.env = {str(k): v for k, v in env.items()}
    place.lists = {k: document[k] for k in ("allowedMcpServers", "deniedMcpServers", "allowManagedMcpServersOnly")
                   if k in document}
    return place
