"""Finding the client configs on this machine, plus the ``--config`` files: one ``ConfigFile`` per location looked at.

Public: ``discover``, ``parse_unknown``, ``display_path``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from harness.audit import readers
from harness.audit.clients import MODULES, codex_cli, continue_dev, goose, zed
from harness.audit.clients.config_format import Candidate, Layout, Shape, add_map
from harness.audit.model import ABSENT, HTTP, READ, UNREADABLE, ConfigFile

UNKNOWN = "unknown"
# A file of unknown client in the common ``name → entry`` shape: every documented URL key is read,
# and every ``${…}`` reference stays unevaluated (harness.audit.clients.config_format, syntax "unknown").
GENERIC = Shape(url_keys=(("url", HTTP), ("serverUrl", HTTP), ("httpUrl", HTTP)), disabled_key="disabled",
                always_load=True, syntax="unknown")


def discover(layout: Layout, extra: Sequence[Path] = (), search: bool = True) -> list[ConfigFile]:
    """Every documented location of every client (when ``search``), then each ``extra`` path."""
    found: list[ConfigFile] = []
    seen: set[Path] = set()
    layout = dataclasses.replace(layout, named=frozenset(_key(Path(p)) for p in extra))
    if search:
        for module in MODULES:
            for candidate in module.candidates(layout):
                seen.add(_key(candidate.path))
                found.append(_read(candidate, module.CLIENT, module.parse, layout))
    for path in extra:
        path = Path(path)
        if _key(path) in seen:
            continue  # already read as a known client's file
        seen.add(_key(path))
        found.append(_read(Candidate(path, "file", readers.kind_for(path)), None, parse_unknown, layout))
    return found


def _read(candidate: Candidate, client: str | None, parse, layout: Layout) -> ConfigFile:
    cfile = ConfigFile(path=str(candidate.path), client=client, scope=candidate.scope, state=READ,
                       display=display_path(candidate.path, layout))
    try:
        document = readers.load(candidate.path, candidate.kind)
    except FileNotFoundError:
        cfile.state = ABSENT
        return cfile
    except NotADirectoryError:
        cfile.state = ABSENT
        return cfile
    except readers.ConfigError as exc:
        cfile.state, cfile.error = UNREADABLE, str(exc)
        return cfile
    cfile.document = document
    parse(document, cfile, layout)
    for entry in cfile.entries:
        entry.source_display = cfile.display
    return cfile


def parse_unknown(document: object, cfile: ConfigFile, layout: Layout) -> None:
    """A ``--config`` file: the structure says which format family it is, never which client."""
    if not isinstance(document, dict):
        cfile.notes.append("the top level is not an object")
        return
    if isinstance(document.get("mcp_servers"), dict):
        codex_cli.parse(document, cfile, layout)
    elif isinstance(document.get("extensions"), dict):
        goose.parse(document, cfile, layout)
    elif isinstance(document.get("context_servers"), dict):
        zed.parse(document, cfile, layout)
    elif isinstance(document.get("mcpServers"), list):
        continue_dev.parse(document, cfile, layout)
    else:
        key = "servers" if "mcpServers" not in document and isinstance(document.get("servers"), dict) else "mcpServers"
        if key not in document:
            cfile.notes.append("no mcpServers, servers, context_servers, mcp_servers or extensions found")
        add_map(cfile, document, key, GENERIC, layout, workspace=Path(cfile.path).resolve().parent)
    for entry in cfile.entries:
        entry.client = UNKNOWN


def display_path(path: Path, layout: Layout) -> str:
    """``path`` as reports print and baselines pair it: cwd-relative, ``~/…``, else absolute."""
    path = Path(path)
    absolute = path if path.is_absolute() else layout.cwd / path
    for base, prefix in ((layout.cwd, ""), (layout.home, "~/")):
        try:
            relative = absolute.relative_to(base)
        except ValueError:
            continue
        return prefix + relative.as_posix()
    return absolute.as_posix()


def _key(path: Path) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(path).absolute()
