"""Each entry's pinned release and moving it to the newest: ``pin_of``, ``plan``, ``apply`` rewrite only
the version words (docs/CATALOG.md, pins). A pin is ``pkg@1.2.3``, ``--package=pkg@1.2.3``, ``pkg==1.2.3``
or ``--from pkg==1.2.3``.
"""

from __future__ import annotations

import concurrent.futures
import re
import shlex
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from harness.db import catalog_text, package_meta
from harness.db.catalog import Catalog, Entry
from harness.db.package_meta import NPM, PYPI, MetadataError

LOOKUPS_AT_ONCE = 8
# An exact release: digits and dots, optionally a pre-release/build suffix; never a range or a tag.
EXACT = re.compile(r"^v?\d+(?:\.\d+)*(?:[-+.]?[0-9A-Za-z][0-9A-Za-z.+-]*)?$")


@dataclass(frozen=True)
class Pin:
    """A pin as written: ``registry``, ``package``, ``version`` and ``spec``, the words that hold them."""

    registry: str
    package: str
    version: str
    spec: str

    def moved(self, version: str) -> str:
        sep = "==" if self.spec.endswith("==" + self.version) else "@"
        return f"{self.package}{sep}{version}"


@dataclass(frozen=True)
class Change:
    """One entry's pin and its ``newest`` release; ``command`` when changed, else a ``note`` why not."""

    name: str
    pin: Pin | None
    newest: str | None = None
    command: str | None = None
    note: str = ""


def pin_of(entry: Entry) -> tuple[Pin | None, str]:
    """The entry's pin, or ``(None, why there is none)``."""
    if entry.command is None:
        return None, "a remote endpoint: nothing to pin"
    try:
        words = shlex.split(entry.command)
    except ValueError:
        return None, "the command cannot be split"
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program == "npx":
        return _npm_pin(words[1:])
    if program == "uvx":
        return _pypi_pin(words[1:])
    return None, f"launched by {program or 'nothing'}: only npx and uvx commands are pinned"


def _npm_pin(words: list[str]) -> tuple[Pin | None, str]:
    spec = None
    for i, word in enumerate(words):
        if word.startswith("--package="):
            spec = word.split("=", 1)[1]
            break
        if word in ("--package", "-p") and i + 1 < len(words):
            spec = words[i + 1]
            break
        if not word.startswith("-"):
            spec = word
            break
    if spec is None:
        return None, "no package in the command"
    scope = "@" if spec.startswith("@") else ""
    name, at, version = spec[len(scope):].partition("@")
    return _checked(NPM, scope + name, version if at else "", spec)


def _pypi_pin(words: list[str]) -> tuple[Pin | None, str]:
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--from" and i + 1 < len(words):
            spec = words[i + 1]
            if spec.startswith(("git+", "http", "/", ".")):
                return None, "installed from a repository or path: no registry release to pin"
            name, eq, version = spec.partition("==")
            return _checked(PYPI, name, version if eq else "", spec)
        if word in ("--with", "--python", "-p", "--index", "--index-url"):
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        sep = "==" if "==" in word else "@"  # uvx takes ``pkg@1.2.3`` and ``pkg==1.2.3`` alike
        name, found, version = word.partition(sep)
        return _checked(PYPI, name, version if found else "", word)
    return None, "no package in the command"


def exact(version: str) -> bool:
    """Whether ``version`` is an exact release (``EXACT``), never a tag, a range or other words."""
    return bool(EXACT.fullmatch(version)) and version != "latest"


def _checked(registry: str, package: str, version: str, spec: str) -> tuple[Pin | None, str]:
    if not version:
        return None, "not pinned: the launcher picks the newest release at each launch"
    if not exact(version):
        return None, f"{version!r} is a tag or a range, not an exact release"
    return Pin(registry, package, version, spec), ""


def plan(catalog: Catalog, src, only: set[str] | None = None) -> list[Change]:
    """Each entry's change, in catalog order; ``only`` restricts to these names."""
    entries = [e for e in catalog.entries if not only or e.name in only]
    found = {e.name: pin_of(e) for e in entries}
    unpinned = {e.name: _registry_of(e) for e in entries if found[e.name][0] is None}
    packages = sorted({(p.registry, p.package) for p, _ in found.values() if p is not None}
                      | {key for key in unpinned.values() if key is not None})
    with concurrent.futures.ThreadPoolExecutor(LOOKUPS_AT_ONCE) as pool:  # each lookup waits on a registry
        answers = dict(zip(packages, pool.map(lambda key: _newest(src, *key), packages)))
    changes = []
    for entry in entries:
        pin, why = found[entry.name]
        if pin is None:
            key = unpinned[entry.name]
            if key is not None and answers[key][0] is None:  # nothing to pin to: say why
                why = f"{why}; the registry has no release to pin: {answers[key][1]}"
            changes.append(Change(entry.name, None, note=why))
            continue
        newest, problem = answers[pin.registry, pin.package]
        if newest is not None and not exact(newest):  # never words a command would run: an option, a path
            newest, problem = None, f"the registry's newest, {newest!r}, is not an exact release"
        if newest is None:
            changes.append(Change(entry.name, pin, note=f"left as it is: {problem}"))
            continue
        if newest == pin.version or not _newer(newest, pin.version):
            changes.append(Change(entry.name, pin, newest, note="current" if newest == pin.version else
                                  f"the registry's newest ({newest}) is not newer than the pin"))
            continue
        changes.append(Change(entry.name, pin, newest, _replace_spec(entry.command or "", pin, newest)))
    return changes


def _registry_of(entry: Entry) -> tuple[str, str] | None:
    """``(registry, package)`` of an ``npx``/``uvx`` entry that names its ``package``, else ``None``."""
    try:
        program = shlex.split(entry.command or "")[0].rsplit("/", 1)[-1]
    except (ValueError, IndexError):
        return None
    registry = {"npx": NPM, "uvx": PYPI}.get(program)
    return (registry, entry.package) if registry and entry.package else None


def _newest(src, registry: str, package: str) -> tuple[str | None, str]:
    try:
        return package_meta.lookup(src, registry, package).latest, ""
    except MetadataError as exc:
        return None, str(exc)


def _newer(candidate: str, current: str) -> bool:
    try:
        return Version(candidate) > Version(current)
    except InvalidVersion:
        return True  # not comparable (npm's semver allows what PEP 440 does not): the registry's newest wins


def _replace_spec(command: str, pin: Pin, newest: str) -> str:
    """``command`` with the pin's words (exactly once, a whole word) holding ``newest``."""
    pattern = re.compile(r"(?<![\w@/.=-])" + re.escape(pin.spec) + r"(?![\w.@-])")
    found = pattern.findall(command)
    if len(found) != 1:
        raise ValueError(f"{pin.spec!r} is not written once as a word of {command!r}")
    return pattern.sub(lambda _: pin.moved(newest), command)


def apply(text: str, changes: list[Change]) -> str:
    """``servers.yaml`` text with every changed command written in place."""
    for change in changes:
        if change.command is not None:
            text = catalog_text.replace_field(text, change.name, "command", change.command)
    return text
