"""What discovery produces: ``ConfigFile`` and its ``Entry`` items, each with its configured and launched face."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from harness.audit.trust import OPTED_IN, Trust
from harness.util import urls

STDIO, HTTP, SSE = "stdio", "http", "sse"
# Entries no config describes a launch for: a client's built-in or extension-provided server.
BUILTIN, EXTENSION = "builtin", "extension"
TRANSPORTS = (STDIO, HTTP, SSE, BUILTIN, EXTENSION)

# Config-file states (spec: every place "marked read, absent, or unreadable").
READ, ABSENT, UNREADABLE = "read", "absent", "unreadable"


@dataclass
class Entry:
    """One configured server."""

    name: str
    client: str
    source: str
    scope: str  # user, project, local, managed, workspace or file
    transport: str
    argv: tuple[str, ...] = ()  # as configured, ``${…}`` left as written; the launch face is ``launch_*``
    url: str | None = None
    env_names: tuple[str, ...] = ()
    header_names: tuple[str, ...] = ()
    disabled: str | None = None  # why it is off
    include_tools: tuple[str, ...] | None = None  # the client's tool filter; None: no allowlist
    exclude_tools: tuple[str, ...] = ()
    always_load: bool = False
    unevaluated: list[str] = field(default_factory=list)  # "<field>: <reference>" whose value is not in hand
    problems: list[str] = field(default_factory=list)  # malformed fields, each naming the field
    cwd: str | None = None
    source_display: str = ""
    trust: Trust | None = None  # the approval decision for a project-scope entry; None for the user's own files
    launch_argv: tuple[str, ...] = field(default=(), repr=False)
    launch_url: str | None = field(default=None, repr=False)
    env_values: dict[str, str] = field(default_factory=dict, repr=False)
    header_values: dict[str, str] = field(default_factory=dict, repr=False)
    secret_values: list[str] = field(default_factory=list, repr=False)

    @property
    def launchable(self) -> bool:
        """Whether this audit can start or reach it (not disabled, not malformed, has a launch)."""
        if self.disabled or self.problems or self.blocked:
            return False
        if self.transport == STDIO:
            return bool(self.launch_argv)
        return self.transport in (HTTP, SSE) and bool(self.launch_url)

    @property
    def blocked(self) -> bool:
        """Whether the client would not start it without an approval that is not on record."""
        return self.trust is not None and self.trust.blocks

    @property
    def sandboxed(self) -> bool:
        """A project entry measured only because of ``--trust-project``: it runs in the sandbox."""
        return self.trust is not None and self.trust.state == OPTED_IN

    def display_launch(self) -> str:
        """The configured command line or URL as the file writes it (a URL's credentials masked)."""
        if self.transport in (HTTP, SSE):
            return urls.shown(self.url) if self.url else ""
        if self.transport in (BUILTIN, EXTENSION):
            return f"({self.transport})"
        return " ".join(_quote(a) for a in self.argv)


@dataclass
class ConfigFile:
    """One file discovery looked at."""

    path: str
    client: str | None  # None for a --config file
    scope: str
    state: str  # read, absent or unreadable
    error: str | None = None  # why it is unreadable
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    document: object = field(default=None, repr=False)  # the parsed top level, never serialised
    display: str = ""


def _quote(arg: str) -> str:
    return shlex.quote(arg) if arg else "''"
