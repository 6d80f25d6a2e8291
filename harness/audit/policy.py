"""Claude Code's ``allowedMcpServers``/``deniedMcpServers``: deny entries applied, allow entries only reported.

Rule: docs/METHODOLOGY.md, "The allowlist and the denylist".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from harness.audit.claude_settings import MANAGED, Place
from harness.audit.model import HTTP, SSE, STDIO, UNREADABLE, Entry
from harness.audit.readers import brief

_REFERENCE = re.compile(r"\$\{")


@dataclass
class Policy:
    """The deny and allow entries read from the settings places, with the places they came from."""

    deny: list[tuple[dict, str]] = field(default_factory=list)
    allow: list[tuple[dict, str]] = field(default_factory=list)
    unevaluable: list[str] = field(default_factory=list)
    allow_set: bool = False
    managed_only: bool = False
    unread: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"denyEntries": len(self.deny), "allowEntries": len(self.allow), "allowlistSet": self.allow_set,
                "allowManagedMcpServersOnly": self.managed_only, "setButUnevaluated": self.unevaluable,
                "unreadPlaces": self.unread}


def read_policy(places: list[Place]) -> Policy:
    """Collect the lists of every readable settings place (the shell holds none)."""
    policy = Policy()
    policy.managed_only = any(p.tier == MANAGED and p.lists.get("allowManagedMcpServersOnly") is True for p in places)
    for place in places:
        if place.state == UNREADABLE:
            policy.unread.append(place.name)
        for key, target in (("deniedMcpServers", policy.deny), ("allowedMcpServers", policy.allow)):
            if key not in place.lists:
                continue
            if key == "allowedMcpServers" and policy.managed_only and place.tier != MANAGED:
                policy.unevaluable.append(f"{place.name}: allowedMcpServers not counted (allowManagedMcpServersOnly)")
                continue
            _collect(place, key, place.lists[key], target, policy)
    return policy


def _collect(place: Place, key: str, value: object, target: list, policy: Policy) -> None:
    if key == "allowedMcpServers":
        policy.allow_set = True
    if not isinstance(value, list):
        policy.unevaluable.append(f"{place.name}: {key} is not a list")
        return
    for index, item in enumerate(value):
        where = f"{place.name}: {key}[{index}]"
        if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in ("serverName", "serverCommand",
                                                                                   "serverUrl"):
            policy.unevaluable.append(f"{where}: not one of serverName, serverCommand, serverUrl")
        elif _references(item):
            policy.unevaluable.append(f"{where}: set-but-unevaluated (holds a ${{…}} reference)")
        else:
            target.append((item, place.name))


def _references(item: dict) -> bool:
    key, value = next(iter(item.items()))
    if key == "serverName":
        return False  # names match literally and never expand
    values = value if isinstance(value, list) else [value]
    return any(isinstance(v, str) and _REFERENCE.search(v) for v in values)


def denied_by(entry: Entry, policy: Policy) -> str | None:
    """The place and entry that deny ``entry``, or ``None``."""
    for item, place in policy.deny:
        if matches(item, entry):
            return f"{place}: {_describe(item)}"
    return None


def allow_verdict(entry: Entry, policy: Policy) -> str:
    """``no-allowlist``, ``allowed`` or ``not-on-allowlist`` (reported, never subtracted)."""
    if not policy.allow_set:
        return "no-allowlist"
    items = [item for item, _ in policy.allow]
    remote = entry.transport in (HTTP, SSE)
    by_key = "serverUrl" if remote else "serverCommand"
    keyed = [i for i in items if by_key in i]
    names = [i for i in items if "serverName" in i]
    candidates = keyed + (names if not keyed else [])
    return "allowed" if any(matches(i, entry) for i in candidates) else "not-on-allowlist"


def matches(item: dict, entry: Entry) -> bool:
    """Whether one list entry matches ``entry`` (see module doc)."""
    key, value = next(iter(item.items()))
    if key == "serverName":
        return isinstance(value, str) and value == entry.name
    if key == "serverCommand":
        return entry.transport == STDIO and isinstance(value, list) and list(entry.launch_argv or entry.argv) == value
    if key == "serverUrl":
        url = entry.launch_url or entry.url
        return bool(entry.transport in (HTTP, SSE) and isinstance(value, str) and url and url_matches(value, url))
    return False


def url_matches(pattern: str, url: str) -> bool:
    """``*`` matches any run; the host compares case-insensitively, trailing dot ignored; the path case-sensitively."""
    regex = "".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", _fold_host(pattern)))
    return re.fullmatch(regex, _fold_host(url), flags=re.DOTALL) is not None


def _fold_host(text: str) -> str:
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if not parts.netloc:
        return text
    netloc = parts.netloc.lower()
    host, sep, port = netloc.rpartition(":") if re.search(r":[0-9*]+$", netloc) else (netloc, "", "")
    netloc = host.rstrip(".") + sep + port
    return parts._replace(netloc=netloc).geturl()


def _describe(item: dict) -> str:
    key, value = next(iter(item.items()))
    return f"{key} {brief(value, 200)!r}"
