"""Which configs one client loads together and which entries a session loads (a session, not a file, is gated).

Rule: docs/METHODOLOGY.md, "Configs one session loads together face the question together".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.audit.clients import BY_ID
from harness.audit.deferral import MANAGED_MCP_UNREADABLE, MCP_CONFIG_UNREADABLE
from harness.audit.model import ABSENT, READ, UNREADABLE, ConfigFile, Entry

# Highest precedence first, where the client's documentation puts one scope over another.
SCOPE_ORDER = {"claude-code": ("local", "project", "user"),
               "gemini-cli": ("project", "user"),        # "Project settings override user settings"
               "kiro": ("workspace", "user")}            # "Workspace config takes precedence"


@dataclass
class Session:
    """What a session loads (``members``) and what it does not, with why (``excluded``)."""

    client: str | None
    label: str
    files: list[ConfigFile]
    composition: str
    members: list[Entry] = field(default_factory=list)
    excluded: list[tuple[Entry, str]] = field(default_factory=list)
    refused: str | None = None
    refused_kind: str | None = None  # what the refusal is about: the managed file, or a member file
    managed_state: str | None = None
    notes: list[str] = field(default_factory=list)


def compose(files: list[ConfigFile]) -> list[Session]:
    """One session per known client with a readable or unreadable file, one per ``--config`` file."""
    sessions = []
    for client, module in BY_ID.items():
        mine = [f for f in files if f.client == client and f.state != ABSENT]
        if mine or client == "claude-code" and _managed(files) is not None:
            sessions.append(_claude(mine, files) if client == "claude-code" else _plain(client, module.NAME, mine))
    for cfile in files:
        if cfile.client is None and cfile.state != ABSENT:
            session = Session(None, f"--config {cfile.display}", [cfile], "file")
            _load(session, cfile.entries, ())
            sessions.append(session)
    return [s for s in sessions if s.files]


def _managed(files: list[ConfigFile]) -> ConfigFile | None:
    return next((f for f in files if f.client == "claude-code" and f.scope == "managed"), None)


def _claude(mine: list[ConfigFile], files: list[ConfigFile]) -> Session:
    managed = _managed(files)
    state = _managed_state(managed)
    session = Session("claude-code", "Claude Code session in the current directory", mine, "user+local+project",
                      managed_state=state)
    if state == "unreadable" and managed is not None:
        session.composition, session.refused_kind, session.refused = "refused", MANAGED_MCP_UNREADABLE, (
            f"managed-mcp.json exists and cannot be read ({managed.error or '; '.join(managed.notes)}): which servers a "
            "session loads cannot be said, so no session total is claimed")
        return session
    others = [e for f in mine if f.scope != "managed" for e in f.entries]
    if state in ("servers", "empty") and managed is not None:
        session.composition = "managed" if state == "servers" else "managed-empty"
        session.excluded += [(e, "suppressed: managed-mcp.json has exclusive control") for e in others]
        session.notes.append("in-process servers the launching app registers load too; no config file describes them")
        _load(session, managed.entries, ())
        return session
    if not _refuse_unreadable(session, [f for f in mine if f.scope != "managed"]):
        _load(session, others, SCOPE_ORDER["claude-code"])
    return session


def _refuse_unreadable(session: Session, files: list[ConfigFile]) -> bool:
    """Refuse the composition when a file it loads cannot be read: no total, not even a floor."""
    broken = [f for f in files if f.state == UNREADABLE]
    if not broken:
        return False
    session.composition, session.refused_kind = "refused", MCP_CONFIG_UNREADABLE
    session.refused = (f"{', '.join(f.display for f in broken)} exists and cannot be read: which servers a session "
                       "loads cannot be said, so no session total is claimed")
    return True


def _managed_state(managed: ConfigFile | None) -> str:
    """``absent``, ``servers``, ``empty`` (MCP disabled) or ``unreadable``."""
    if managed is None or managed.state == ABSENT:
        return "absent"
    if managed.state == UNREADABLE or not isinstance(managed.document, dict) or \
            not isinstance(managed.document.get("mcpServers"), dict):
        return "unreadable"
    return "servers" if managed.document["mcpServers"] else "empty"


def _plain(client: str, name: str, mine: list[ConfigFile]) -> Session:
    session = Session(client, f"{name} session in the current directory", mine, "+".join(f.scope for f in mine))
    if _refuse_unreadable(session, mine):
        return session
    order = SCOPE_ORDER.get(client, ())
    if not order and len([f for f in mine if f.state == READ]) > 1:
        session.notes.append("which file wins for a name in two of them is not on record: same-named entries are both "
                             "counted")
    _load(session, [e for f in mine for e in f.entries], order)
    return session


def _load(session: Session, entries: list[Entry], order: tuple[str, ...]) -> None:
    """Add ``entries`` to ``session``; with a scope ``order``, a higher scope's name shadows a lower one's."""
    winner: dict[str, Entry] = {}
    if order:
        for entry in sorted(entries, key=lambda e: order.index(e.scope) if e.scope in order else len(order)):
            if not entry.blocked:
                winner.setdefault(entry.name, entry)
    for entry in entries:
        if entry.disabled:
            session.excluded.append((entry, f"disabled ({entry.disabled})"))
        elif entry.blocked:
            session.excluded.append((entry, f"not approved: {entry.trust.reason if entry.trust else ''}"))
        elif order and winner[entry.name] is not entry:
            session.excluded.append((entry, f"shadowed by the {winner[entry.name].scope}-scope entry of the same name"))
        else:
            session.members.append(entry)
