"""Variable references in config values, expanded per client syntax only where the value is in hand.

Public: ``Expander``, ``workspace_context``. Rule: docs/AUDIT.md, "What it reads".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

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
    """Expands one client's references. ``environ``: where values come from (default
    ``os.environ``); ``context``: values of client variables such as ``workspaceFolder``."""

    syntax: str
    environ: Mapping[str, str] | None = None
    context: Mapping[str, str] = field(default_factory=dict)
    unevaluated: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)

    def expand(self, text: str, where: str) -> tuple[str, bool]:
        """``(expanded text, complete)``; ``complete`` is false when a reference was left
        unevaluated (it stays in the text as written and is recorded under ``where``)."""
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
