"""Whether the user approved a project's MCP servers, by each client's own rule.

Public: ``rule_for``, ``Trust``, ``managed_dir``. Rules: docs/AUDIT.md, "Which project servers are launched".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from pathlib import Path

from harness.audit import readers

if TYPE_CHECKING:  # Layout lives with the clients, which import this module
    from harness.audit.clients.config_format import Layout

TRUST_FLAG = "--trust-project"
APPROVED, OPTED_IN, NOT_APPROVED, REJECTED = "approved", "opted-in", "not-approved", "rejected"
PROJECT_SCOPES = ("project", "workspace")
_OPT_IN = f"to measure it: audit {TRUST_FLAG} (runs it in the sandbox)"
# Where a client keeps the approval this audit cannot read, said once per client.
_APP_STATE = {
    "vscode": "VS Code asks before it starts a workspace server (and again after each change) and keeps your answer "
              "in its own state, which this audit does not read",
    "cursor": "Cursor asks before it loads a project's .cursor/mcp.json servers and keeps your approval in its own "
              "store, which this audit does not read",
    "zed": "Zed opens every worktree in Restricted Mode and starts no .zed/settings.json server until you trust it; "
           "that choice is kept in Zed's own database, which this audit does not read",
    "kiro": "Kiro keeps workspace trust in the editor's own state, which this audit does not read",
    "continue": "Continue loads .continue/mcpServers blocks from the workspace; whether you trust that workspace is "
                "kept in the editor's own state, which this audit does not read",
}


@dataclass(frozen=True)
class Trust:
    """The decision for one project-scope entry: its ``state`` and the ``reason`` (with how to opt in)."""

    state: str
    reason: str

    @property
    def blocks(self) -> bool:
        """Whether the entry stays unlaunched (and unexpanded)."""
        return self.state in (NOT_APPROVED, REJECTED)

    def to_json(self) -> dict:
        return {"state": self.state, "reason": self.reason}


Rule = Callable[[str], Trust]


def rule_for(client: str, scope: str, layout) -> Rule | None:
    """The decision function for ``client``'s entries at ``scope`` (``None``: the user's own file)."""
    if scope not in PROJECT_SCOPES:
        return None
    opted = getattr(layout, "trust_project", False)
    if client == "claude-code":
        decide = _claude(layout)
    elif client == "codex-cli":
        decide = _whole(_codex(layout))
    elif client == "gemini-cli":
        decide = _whole(_gemini(layout))
    else:
        decide = _whole((False, _APP_STATE.get(client, "the client's approval of this project is not on record")))

    def rule(name: str) -> Trust:
        verdict = decide(name)
        if verdict.state == NOT_APPROVED and opted:
            return Trust(OPTED_IN, f"{TRUST_FLAG} given ({verdict.reason.split(';')[0]})")
        return verdict

    return rule


def _whole(found: tuple[bool, str]) -> Callable[[str], Trust]:
    """A rule that trusts a whole project or none of it."""
    approved, why = found
    verdict = Trust(APPROVED, why) if approved else Trust(NOT_APPROVED, f"{why}; {_OPT_IN}")
    return lambda name: verdict


def _load(path: Path, kind: str = "json") -> dict:
    """A settings document, or ``{}`` when absent or unreadable (which approves nothing)."""
    try:
        document = readers.load(path, kind)
    except (OSError, readers.ConfigError):
        return {}
    return document if isinstance(document, dict) else {}


def managed_dir(layout: Layout) -> Path:
    """Claude Code's system directory for managed files on the layout's platform."""
    if layout.platform == "darwin":
        return layout.system_root / "Library" / "Application Support" / "ClaudeCode"
    if layout.platform == "win32":
        return Path("C:/Program Files/ClaudeCode")  # not %ProgramData%: a legacy path Claude Code does not read
    return layout.system_root / "etc" / "claude-code"


def _member(document: dict[str, Any], key: str) -> dict[str, Any]:
    """``document[key]`` when it is an object, else ``{}``."""
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def resolved(path: Path) -> Path:
    """``path`` with ``~`` and symbolic links resolved (as given when it cannot be)."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(path)


def _claude(layout) -> Callable[[str], Trust]:
    user = _load(layout.home / ".claude.json")
    projects = _member(user, "projects")
    target = resolved(layout.cwd)
    project = next((v for k, v in projects.items() if isinstance(k, str) and k and isinstance(v, dict)
                    and resolved(Path(k)) == target), {})
    dialog = project.get("hasTrustDialogAccepted") is True
    places = [("~/.claude.json (this project)", project, True),
              ("managed-settings.json", _load(managed_dir(layout) / "managed-settings.json"), True),
              ("~/.claude/settings.json", _load(layout.home / ".claude" / "settings.json"), True),
              (".claude/settings.local.json", _load(layout.cwd / ".claude" / "settings.local.json"), dialog),
              (".claude/settings.json", _load(layout.cwd / ".claude" / "settings.json"), dialog)]

    def decide(name: str) -> Trust:
        for place, document, _ in places:  # a rejection counts wherever it is written
            if _names(document, "disabledMcpjsonServers", name):
                return Trust(REJECTED, f"rejected in {place} (disabledMcpjsonServers): never launched")
        for place, document, honoured in places:
            if not honoured:
                continue
            if document.get("enableAllProjectMcpServers") is True:
                return Trust(APPROVED, f"approved in {place} (enableAllProjectMcpServers)")
            if _names(document, "enabledMcpjsonServers", name):
                return Trust(APPROVED, f"approved in {place} (enabledMcpjsonServers)")
        off = next((p for p, d, h in places if h and d.get("enableAllProjectMcpServers") is False), None)
        why = (f"enableAllProjectMcpServers is false in {off} and no enabledMcpjsonServers names it" if off else
               "Claude Code asks before it starts a .mcp.json server, and no approval of it is on record "
               "(enabledMcpjsonServers, enableAllProjectMcpServers)")
        if not dialog and any(_approves(d, name) for p, d, h in places if not h):
            why += "; the repository's own .claude/settings files approve it, which counts only after you accept "\
                   "the folder's trust dialog"
        return Trust(NOT_APPROVED, f"{why}; {_OPT_IN}")

    return decide


def _names(document: dict, key: str, name: str) -> bool:
    value = document.get(key)
    return isinstance(value, list) and name in value


def _approves(document: dict, name: str) -> bool:
    return document.get("enableAllProjectMcpServers") is True or _names(document, "enabledMcpjsonServers", name)


def _codex(layout) -> tuple[bool, str]:
    environ = layout.environ if layout.environ is not None else os.environ
    home = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else layout.home / ".codex"
    user = _load(home / "config.toml", "toml")
    projects = _member(user, "projects")
    levels = {resolved(Path(k)): v.get("trust_level") for k, v in projects.items()
              if isinstance(k, str) and k and isinstance(v, dict)}
    markers = user.get("project_root_markers", [".git"])
    markers = [m for m in markers if isinstance(m, str) and m] if isinstance(markers, list) else [".git"]
    here = resolved(layout.cwd)
    for folder in dict.fromkeys(f for f in (here, _project_root(here, markers), _main_checkout(here)) if f):
        if folder in levels:  # Codex's order: the directory, its project root, the main checkout
            if levels[folder] == "trusted":
                return True, f"a trusted project in Codex ({folder} trust_level = \"trusted\")"
            return False, f"Codex reads .codex/config.toml only in a trusted project, and {folder} is " \
                          f"trust_level = {readers.brief(levels[folder], 20)!r}"
    above = next((f for f in here.parents if levels.get(f) == "trusted"), None)
    why = f" (trusting {above} does not trust a repository inside it)" if above else ""
    return False, "Codex reads .codex/config.toml only in a trusted project, and this one is not trusted in your " \
                  f"config.toml ([projects.\"<path>\"] trust_level){why}"


def _project_root(here: Path, markers: list[str]) -> Path | None:
    """The nearest directory at or above ``here`` holding one of ``markers`` (Codex's project root)."""
    if not markers:
        return None
    return next((d for d in (here, *here.parents) if any(os.path.lexists(d / m) for m in markers)), None)


def _main_checkout(here: Path) -> Path | None:
    """The main checkout of a linked git worktree, when its ``gitdir`` names this ``.git`` back."""
    root = next((d for d in (here, *here.parents) if os.path.lexists(d / ".git")), None)
    if root is None or not (root / ".git").is_file():
        return None
    try:
        pointer = readers.read_text(root / ".git", 4096).strip()
        admin = resolved(root / pointer.removeprefix("gitdir:").strip()) if pointer.startswith("gitdir:") else None
        if admin is None or admin.parent.name != "worktrees":
            return None
        back = readers.read_text(admin / "gitdir", 4096).strip()
    except (OSError, readers.ConfigError):
        return None
    return admin.parent.parent.parent if resolved(admin / back) == resolved(root / ".git") else None


def _gemini(layout) -> tuple[bool, str]:
    settings = _load(layout.home / ".gemini" / "settings.json")
    folder_trust = _member(_member(settings, "security"), "folderTrust")
    if folder_trust.get("enabled") is not True:
        return False, "Gemini CLI's folder trust is off (security.folderTrust.enabled), so nothing records that you " \
                      "chose to run this project's servers"
    rules = _load(layout.home / ".gemini" / "trustedFolders.json")
    here, best = resolved(layout.cwd), None
    for key, level in rules.items():
        if not isinstance(key, str) or not key:
            continue
        path = resolved(Path(key))
        root = path.parent if level == "TRUST_PARENT" else path
        if (here == root or root in here.parents) and (best is None or len(root.parts) > len(best[0].parts)):
            best = (root, level)
    if best and best[1] in ("TRUST_FOLDER", "TRUST_PARENT"):
        return True, f"a trusted folder in Gemini CLI (~/.gemini/trustedFolders.json: {best[1]})"
    why = "marked DO_NOT_TRUST" if best else "not in ~/.gemini/trustedFolders.json"
    return False, f"Gemini CLI ignores an untrusted folder's settings, and this folder is {why}"
