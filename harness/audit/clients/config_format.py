"""A client config format: ``Layout`` (where to look), ``Candidate``, ``Shape`` (a client's key names),
the ``Expander`` of variable references per client syntax, and the entry builders for the common
``name → {command, args, env, url, …}`` shape. Expansion rule: docs/AUDIT.md, "What it reads".
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from harness.audit.model import BUILTIN, EXTENSION, HTTP, SSE, STDIO, Entry
from harness.audit.readers import brief
from harness.audit.trust import Rule, Trust, resolved, rule_for
from harness.probe.redact import public_value

# name → pattern; group "var" (+ optional "default") for environment references, "ctx" for a
# client-defined variable, "never" for a reference whose value this audit never holds.
SYNTAXES = {
    "claude": re.compile(r"\$\{(?P<var>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}"),
    "env-colon": re.compile(r"\$\{env:(?P<var>[A-Za-z_][A-Za-z0-9_]*)\}|\$\{(?P<never>input:[^}]*)\}"
                            r"|\$\{(?P<ctx>userHome|workspaceFolder|workspaceFolderBasename|pathSeparator|/)\}"),
    "dollar": re.compile(r"\$\{(?P<var>[A-Za-z_][A-Za-z0-9_]*)\}|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"),
    "continue": re.compile(r"\$\{\{\s*(?P<never>(?:secrets|inputs)\.[^}]*?)\s*\}\}"),
    # A file whose client is unknown (--config): every reference, in any client's syntax, is
    # unevaluated, because which syntax applies is not knowable from the file.
    "unknown": re.compile(r"(?P<never>\$\{\{[^}]*\}\}|\$\{[^}]*\})"),
    "literal": None,
}


@dataclass
class Expander:
    """Expands one client's references from ``environ`` and the client's own ``context`` variables."""

    syntax: str
    environ: Mapping[str, str] | None = None
    context: Mapping[str, str] = field(default_factory=dict)
    unevaluated: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)

    def expand(self, text: str, where: str) -> tuple[str, bool]:
        """``(expanded text, complete)``; an unevaluated reference stays as written and is recorded under ``where``."""
        pattern = SYNTAXES[self.syntax]
        if pattern is None or not isinstance(text, str):
            return text, True
        environ = os.environ if self.environ is None else self.environ
        complete = True

        def one(match: re.Match) -> str:
            nonlocal complete
            groups = match.groupdict()
            var = groups.get("var") or groups.get("bare")
            if var is not None:
                if var in environ:
                    if not public_value(var, environ[var]):  # ${env:HOME} is a path, not a secret
                        self.used.append(environ[var])
                    return environ[var]
                if groups.get("default") is not None:
                    return groups["default"]
            elif groups.get("ctx") is not None and groups["ctx"] in self.context:
                return self.context[groups["ctx"]]
            complete = False
            self.unevaluated.append(f"{where}: {match.group(0)}")
            return match.group(0)

        return pattern.sub(one, text), complete


def workspace_context(workspace: str, home: str) -> dict[str, str]:
    """The client variables VS Code and Cursor define for a workspace (their variables reference)."""
    return {"workspaceFolder": workspace, "workspaceFolderBasename": os.path.basename(workspace.rstrip("/")),
            "userHome": home, "pathSeparator": os.sep, "/": os.sep}


DEFAULT_TYPES = {"stdio": STDIO, "http": HTTP, "streamable-http": HTTP, "streamableHttp": HTTP,
                 "streamable_http": HTTP, "sse": SSE}
MAX_ENTRIES = 500  # per file: a config is a human artefact; past this it is not one


@dataclass(frozen=True)
class Layout:
    """Where discovery looks: home, cwd, platform, Windows' ``appdata`` and the expansion ``environ``."""

    home: Path
    cwd: Path
    platform: str = sys.platform
    appdata: Path | None = None
    environ: dict | None = None
    system_root: Path = Path("/")
    trust_project: bool = False  # --trust-project: measure project servers the client has no approval of
    named: frozenset = frozenset()  # resolved paths given with --config: naming a file is consent

    @classmethod
    def current(cls) -> "Layout":
        appdata = os.environ.get("APPDATA")
        return cls(home=Path.home().resolve(), cwd=Path.cwd().resolve(), platform=sys.platform,
                   appdata=Path(appdata) if appdata else None)

    def user_data(self, *parts: str) -> Path:
        """The per-user application-data directory joined with ``parts`` (``~/Library/Application
        Support`` on macOS, ``%APPDATA%`` on Windows, ``~/.config`` elsewhere)."""
        if self.platform == "darwin":
            base = self.home / "Library" / "Application Support"
        elif self.platform == "win32":
            base = self.appdata or self.home / "AppData" / "Roaming"
        else:
            base = self.home / ".config"
        return base.joinpath(*parts)


@dataclass(frozen=True)
class Candidate:
    """A documented config location: ``path``, the ``scope`` it gives its entries, the parser
    ``kind`` (json/toml/yaml)."""

    path: Path
    scope: str
    kind: str = "json"


@dataclass(frozen=True)
class Shape:
    """One client's documented keys for a server entry."""

    command: str = "command"
    args: str = "args"
    env: str = "env"
    url_keys: tuple[tuple[str, str], ...] = (("url", HTTP),)  # URL key → the transport it implies without a type
    headers: str | None = "headers"
    type_key: str | None = "type"
    type_map: dict = field(default_factory=lambda: dict(DEFAULT_TYPES))
    disabled_key: str | None = None  # true: off
    enabled_key: str | None = None  # false: off
    include: str | None = None  # tool filter keys
    exclude: str | None = None
    always_load: bool = False
    cwd_key: str | None = None
    syntax: str = "literal"  # expansion syntax, one of SYNTAXES
    env_name_lists: tuple[str, ...] = ()


@dataclass
class Context:
    """Where entries come from; ``workspace`` is the directory a project-scope entry launches in."""

    client: str
    source: str
    scope: str
    layout: Layout
    workspace: Path | None = None

    @cached_property
    def trust(self) -> Rule | None:
        """The client's approval rule for this file (``None``: the user's own file, or a ``--config`` one)."""
        if resolved(Path(self.source)) in self.layout.named:
            return None
        return rule_for(self.client, self.scope, self.layout)

    def verdict(self, name: str) -> Trust | None:
        return self.trust(name) if self.trust else None

    def expander(self, syntax: str, verdict: Trust | None = None) -> Expander:
        """An expander for this file; an unapproved entry gets no value from the caller's environment."""
        context = workspace_context(str(self.workspace or self.layout.cwd), str(self.layout.home))
        environ = {} if verdict is not None and verdict.blocks else self.layout.environ
        return Expander(syntax, environ=environ, context=context)


def entries_from_map(servers: object, shape: Shape, ctx: Context, where: str) -> tuple[list[Entry], list[str]]:
    """Entries of a ``name → entry`` object at ``where`` (e.g. ``mcpServers``); returns ``(entries, file problems)``."""
    if servers is None:
        return [], []
    if not isinstance(servers, dict):
        return [], [f"{where} is not an object (found {type(servers).__name__})"]
    entries: list[Entry] = []
    for index, (name, raw) in enumerate(servers.items()):
        if index >= MAX_ENTRIES:
            return entries, [f"{where} holds more than {MAX_ENTRIES} entries; the rest were not read"]
        entries.append(build_entry(str(name), raw, shape, ctx, f"{where}.{name}"))
    return entries, []


def build_entry(name: str, raw: object, shape: Shape, ctx: Context, where: str) -> Entry:
    """One ``Entry`` from ``raw`` under ``shape``; every malformed field is a problem naming it."""
    entry = Entry(name=name, client=ctx.client, source=ctx.source, scope=ctx.scope, transport=STDIO)
    if not isinstance(raw, dict):
        entry.problems.append(f"{where}: the entry is not an object")
        return entry
    entry.trust = ctx.verdict(name)
    expander = ctx.expander(shape.syntax, entry.trust)
    _switches(entry, raw, shape, where)
    _transport(entry, raw, shape, where)
    if entry.transport == STDIO:
        _command(entry, raw, shape, where, expander)
    elif entry.transport in (HTTP, SSE):
        _remote(entry, raw, shape, where, expander)
    _env(entry, raw, shape, where, expander)
    _filters(entry, raw, shape, where)
    if shape.cwd_key and isinstance(raw.get(shape.cwd_key), str):
        entry.cwd = raw[shape.cwd_key]
    elif ctx.workspace is not None:
        entry.cwd = str(ctx.workspace)
    entry.unevaluated += expander.unevaluated
    entry.secret_values += expander.used
    return entry


def _switches(entry: Entry, raw: dict, shape: Shape, where: str) -> None:
    for key, off in ((shape.disabled_key, True), (shape.enabled_key, False)):
        if not key or key not in raw:
            continue
        if raw[key] is off:
            entry.disabled = f"{key}: {'true' if off else 'false'}"
        elif raw[key] is not (not off):
            entry.problems.append(f"{where}.{key}: not a boolean")
    if shape.always_load and "alwaysLoad" in raw:
        if isinstance(raw["alwaysLoad"], bool):
            entry.always_load = raw["alwaysLoad"]
        else:
            entry.problems.append(f"{where}.alwaysLoad: not a boolean")


def _transport(entry: Entry, raw: dict, shape: Shape, where: str) -> None:
    declared = raw.get(shape.type_key) if shape.type_key else None
    if declared is not None:
        if isinstance(declared, str) and declared in shape.type_map:
            entry.transport = shape.type_map[declared]
            return
        entry.problems.append(f"{where}.{shape.type_key}: unknown transport {brief(declared)!r}")
    for key, transport in shape.url_keys:
        if key in raw:
            entry.transport = transport
            return
    if shape.command not in raw:
        entry.problems.append(f"{where}: neither {shape.command!r} nor a URL key "
                              f"({', '.join(k for k, _ in shape.url_keys)})")


def _command(entry: Entry, raw: dict, shape: Shape, where: str, expander: Expander) -> None:
    command = raw.get(shape.command)
    if not isinstance(command, str) or not command.strip():
        entry.problems.append(f"{where}.{shape.command}: missing or not a non-empty string")
        return
    args = raw.get(shape.args, [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        entry.problems.append(f"{where}.{shape.args}: not a list of strings")
        args = []
    entry.argv = (command, *args)
    launch, complete = [], True
    for index, part in enumerate(entry.argv):
        label = shape.command if index == 0 else f"{shape.args}[{index - 1}]"
        text, done = expander.expand(part, label)
        launch.append(text)
        complete &= done
    if "\x00" in "".join(launch):
        entry.problems.append(f"{where}: the command line holds a NUL character")
    elif complete:
        entry.launch_argv = tuple(launch)


def _remote(entry: Entry, raw: dict, shape: Shape, where: str, expander: Expander) -> None:
    key = next((k for k, _ in shape.url_keys if k in raw), None)
    url = raw.get(key) if key else None
    if key is None or not isinstance(url, str) or not url.strip():
        entry.problems.append(f"{where}.{key or 'url'}: missing or not a non-empty string")
        return
    entry.url = url
    text, complete = expander.expand(url, key)
    if complete:
        problem = url_problem(text)
        if problem:
            entry.problems.append(f"{where}.{key}: {problem}")
        else:
            entry.launch_url = text
    headers = raw.get(shape.headers) if shape.headers else None
    if headers is None:
        return
    if not isinstance(headers, dict):
        entry.problems.append(f"{where}.{shape.headers}: not an object")
        return
    for name, value in headers.items():
        if not isinstance(value, str):
            entry.problems.append(f"{where}.{shape.headers}.{name}: not a string")
            continue
        text, complete = expander.expand(value, f"{shape.headers}.{name}")
        entry.header_names += (str(name),)
        problem = header_problem(str(name), text if complete else value)
        if problem:
            entry.problems.append(f"{where}.{shape.headers}.{name}: {problem}")
        if complete:
            entry.header_values[str(name)] = text
            entry.secret_values += [text] + text.split(None, 1)[1:]  # and the credential of "<scheme> <credential>"


def url_problem(url: str) -> str | None:
    """Why ``url`` is not one a client can connect to, never quoting it; ``None`` when it is."""
    if not url.startswith(("http://", "https://")):
        return "not an http(s) URL"
    if any(ord(c) <= 0x20 or 0x7f <= ord(c) <= 0x9f for c in url):
        return "not a URL a client can use: it holds white space or a control character"
    try:
        parts = urlsplit(url)
        if not parts.hostname:
            return "not a URL a client can use: it names no host"
        parts.port  # noqa: B018 - raises for a port that is not 0-65535
    except ValueError as exc:
        reason = "its port is not a number from 0 to 65535" if "ort" in str(exc) else "it cannot be parsed"
        return f"not a URL a client can use: {reason}"
    return None


# RFC 9110 §5.6.2: a field name is a token; a field value holds no CR, LF, NUL or other control
# character but horizontal tab (§5.5). A client cannot send anything else; an HTTP library refusing
# it before connecting would read as the server being "unreachable".
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def header_problem(name: str, value: str) -> str | None:
    """Why header ``name: value`` cannot be sent (``None`` when it can). Never quotes the value."""
    if not name or not set(name) <= _TOKEN:
        return "not a header name a client can send (RFC 9110 token characters only)"
    if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7f for c in value):
        return "the value holds a line break or a control character, which no client can send"
    return None


def _env(entry: Entry, raw: dict, shape: Shape, where: str, expander: Expander) -> None:
    env = raw.get(shape.env) if shape.env else None
    if env is not None and not isinstance(env, dict):
        entry.problems.append(f"{where}.{shape.env}: not an object")
        env = None
    for name, value in (env or {}).items():
        name = str(name)
        if not _env_name_ok(name):
            entry.problems.append(f"{where}.{shape.env}: {name[:60]!r} is not an environment variable name")
            continue
        entry.env_names += (name,)
        if not isinstance(value, str):
            entry.problems.append(f"{where}.{shape.env}.{name}: not a string")
            continue
        text, complete = expander.expand(value, f"{shape.env}.{name}")
        if complete:
            entry.env_values[name] = text
            if not public_value(name, text):
                entry.secret_values.append(text)
    for key in shape.env_name_lists:
        names = raw.get(key)
        if names is None:
            continue
        if not isinstance(names, list) or not all(isinstance(n, str) and _env_name_ok(n) for n in names):
            entry.problems.append(f"{where}.{key}: not a list of environment variable names")
            continue
        entry.env_names += tuple(n for n in names if n not in entry.env_names)


def _filters(entry: Entry, raw: dict, shape: Shape, where: str) -> None:
    for key, attr in ((shape.include, "include_tools"), (shape.exclude, "exclude_tools")):
        if not key or key not in raw:
            continue
        value = raw[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            entry.problems.append(f"{where}.{key}: not a list of tool names")
            continue
        setattr(entry, attr, tuple(value))


def _env_name_ok(name: str) -> bool:
    return 0 < len(name) <= 256 and "=" not in name and "\x00" not in name


def not_launchable(name: str, ctx: Context, kind: str, why: str) -> Entry:
    """An entry the client runs itself (``BUILTIN``) or from an extension (``EXTENSION``)."""
    entry = Entry(name=name, client=ctx.client, source=ctx.source, scope=ctx.scope, transport=kind)
    entry.unevaluated.append(why)
    return entry


__all__ = ["BUILTIN", "EXTENSION", "Candidate", "Context", "Layout", "Shape", "build_entry", "entries_from_map",
           "not_launchable"]


def add_map(cfile, document: object, key: str, shape: Shape, layout: Layout, workspace: Path | None = None,
            scope: str | None = None) -> None:
    """Add the entries of ``document[key]`` to ``cfile`` (a ``ConfigFile``), file problems to its notes."""
    if not isinstance(document, dict):
        cfile.notes.append("the top level is not an object")
        return
    ctx = Context(cfile.client or "unknown", cfile.path, scope or cfile.scope, layout, workspace)
    entries, problems = entries_from_map(document.get(key), shape, ctx, key)
    cfile.entries += entries
    cfile.notes += problems


def table(document: object, key: str, cfile) -> list[tuple[str, object]]:
    """The ``(name, raw entry)`` pairs of ``document[key]``; a non-object is a note on ``cfile``."""
    servers = document.get(key) if isinstance(document, dict) else None
    if servers is None:
        return []
    if not isinstance(servers, dict):
        cfile.notes.append(f"{key} is not an object")
        return []
    return [(str(name), raw) for name, raw in list(servers.items())[:MAX_ENTRIES]]
