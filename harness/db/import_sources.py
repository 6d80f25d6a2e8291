"""Where catalog candidates come from (docs/CATALOG.md): a ``server.json``-format file or registry
list URL, a package-list TSV (``read_candidates``), or names given on the command line
(``from_names``); each is a ``Candidate`` for ``harness.db.importer`` to propose and triage.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from harness.db.package_meta import NPM, PYPI
from harness.util import bounded

MAX_INPUT_BYTES = 32 * 1024 * 1024
MAX_PAGES = 200  # registry list pages read from a URL (100 servers each)


class ImportInputError(ValueError):
    """An input file or URL that cannot be read as a source of candidates."""


@dataclass(frozen=True)
class Candidate:
    """A package or remote URL said to be an MCP server, with its launch ``args``, ``env``, ``set_env``."""

    registry: str  # npm, pypi or url
    package: str
    version: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    set_env: tuple[tuple[str, str], ...] = ()
    source: str = ""
    server_name: str | None = None  # the registry's reverse-DNS name
    repository: str | None = None
    problem: str | None = None  # why the source's description cannot be launched as it is


def read_candidates(path_or_url: str) -> list[Candidate]:
    """Candidates from a ``server.json``-format file or URL, or a package-list TSV."""
    if re.match(r"https?://", path_or_url):
        return _registry_pages(path_or_url)
    try:
        data = bounded.read_regular(path_or_url, MAX_INPUT_BYTES)
        text = data.decode("utf-8")
    except (OSError, ValueError) as exc:
        raise ImportInputError(f"{path_or_url}: cannot read: {exc}") from None
    if text.lstrip().startswith(("{", "[")):
        try:
            return from_server_json(json.loads(text), source=Path(path_or_url).name)
        except ValueError as exc:
            raise ImportInputError(f"{path_or_url}: not JSON: {exc}") from None
    return from_package_list(text, source=Path(path_or_url).name)


def _registry_pages(url: str) -> list[Candidate]:
    """Every page of a registry list URL (at most ``MAX_PAGES``; a repeated cursor ends the walk)."""
    found, cursor, seen = [], None, set()
    for _ in range(MAX_PAGES):
        page_url = url if cursor is None else f"{url}{'&' if '?' in url else '?'}cursor={quote(str(cursor), safe='')}"
        try:
            doc = json.loads(bounded.fetch(page_url, 60.0, MAX_INPUT_BYTES))
        except (OSError, ValueError) as exc:
            raise ImportInputError(f"{url}: {str(exc)[:200]}") from None
        found += from_server_json(doc, source=url)
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        cursor = meta.get("nextCursor") if isinstance(meta, dict) else None
        if not cursor or cursor in seen:
            break
        seen.add(cursor)
    return found


def from_server_json(doc: object, source: str = "server.json") -> list[Candidate]:
    """Candidates from a ``server.json``, a registry list answer or an array of either (newest
    versions, first usable package or remote).
    """
    if isinstance(doc, dict) and isinstance(doc.get("servers"), list):
        items = doc["servers"]
    elif isinstance(doc, list):
        items = doc
    else:
        items = [doc]
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        server = got if isinstance(got := item.get("server"), dict) else item
        official = ((item.get("_meta") or {}).get("io.modelcontextprotocol.registry/official") or {}) \
            if isinstance(item.get("_meta"), dict) else {}
        if official.get("isLatest") is False or official.get("status") == "deleted":
            continue
        candidate = _server_candidate(server, source)
        if candidate is not None:
            out.append(candidate)
    return out


def _server_candidate(server: dict, source: str) -> Candidate | None:
    name = got if isinstance(got := server.get("name"), str) else None
    repo = (server.get("repository") or {}).get("url") if isinstance(server.get("repository"), dict) else None
    for pkg in server.get("packages") or ():
        if not isinstance(pkg, dict) or pkg.get("registryType") not in (NPM, PYPI):
            continue
        if (pkg.get("transport") or {}).get("type", "stdio") != "stdio" or not isinstance(pkg.get("identifier"), str):
            continue
        args, problem = _arguments(pkg.get("packageArguments") or ())
        env, set_env = _environment(pkg.get("environmentVariables") or ())
        version = pkg.get("version") if isinstance(pkg.get("version"), str) and pkg.get("version") != "latest" else None
        return Candidate(pkg["registryType"], pkg["identifier"], version, tuple(args), tuple(env), tuple(set_env),
                         source, name, repo, problem)
    for remote in server.get("remotes") or ():
        if isinstance(remote, dict) and remote.get("type") == "streamable-http" and isinstance(remote.get("url"), str) \
                and "{" not in remote["url"] and remote["url"].startswith("https://"):
            headers = [h.get("name") for h in remote.get("headers") or () if isinstance(h, dict)]
            problem = "its endpoint needs headers" if any(headers) else None
            return Candidate("url", remote["url"], None, source=source, server_name=name, repository=repo,
                             problem=problem)
    return None


def _arguments(items) -> tuple[list[str], str | None]:
    """The words of ``packageArguments`` and a problem when a required one has no value."""
    words: list[str] = []
    for arg in items:
        if not isinstance(arg, dict):
            continue
        value = got if isinstance(got := arg.get("value"), str) else arg.get("default")
        if not isinstance(value, str) or "{" in value:
            if arg.get("isRequired"):
                label = arg.get("name") or arg.get("valueHint") or "positional"
                return words, f"requires argument {label!s} with no default"
            continue
        words += [arg["name"], value] if arg.get("type") == "named" and isinstance(arg.get("name"), str) else [value]
    return words, None


def _environment(items) -> tuple[list[str], list[tuple[str, str]]]:
    """``(env names, setEnv pairs)``: secrets and values without a default are names."""
    env, set_env = [], []
    for var in items:
        if not isinstance(var, dict) or not isinstance(var.get("name"), str):
            continue
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", var["name"]) or not var.get("isRequired"):
            continue
        fixed = got if isinstance(got := var.get("value"), str) else var.get("default")
        if not var.get("isSecret") and isinstance(fixed, str) and "{" not in fixed:
            set_env.append((var["name"], fixed))
        elif var["name"] not in env:
            env.append(var["name"])
    return env, set_env


def from_package_list(text: str, source: str = "packages.tsv") -> list[Candidate]:
    """Candidates from a TSV with ``name``, ``registry`` and optional ``version``, ``command``."""
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    if rows and not {"name", "registry"} <= set(rows[0]):
        raise ImportInputError(f"{source}: a package list needs the columns name and registry")
    out: dict[tuple[str, str], Candidate] = {}
    for row in rows:
        registry = (row.get("registry") or "").strip().lower()
        name = (row.get("name") or "").strip()
        if registry not in (NPM, PYPI) or not name:
            continue
        env = tuple(re.findall(r"\[--env ([A-Z_][A-Z0-9_]*)\]", row.get("command") or ""))
        if (registry, name) in out:  # a package listed again adds the env names it gives
            first = out[registry, name]
            out[registry, name] = replace(first, env=first.env + tuple(e for e in env if e not in first.env))
            continue
        args, problem = _list_args(row.get("command") or "", registry, name)
        out[registry, name] = Candidate(registry, name, (row.get("version") or "").strip() or None, tuple(args), env,
                                        source=source, problem=problem)
    return list(out.values())


def _list_args(command: str, registry: str, name: str) -> tuple[list[str], str | None]:
    """The words after the package (npx) or the command (uvx)."""
    try:
        words = shlex.split(re.sub(r"\[--env [A-Z_][A-Z0-9_]*\]", "", command))
    except ValueError as exc:
        return [], f"command cannot be split: {exc}"
    if not words:
        return [], None
    if registry == NPM:
        at = next((i for i, w in enumerate(words) if w == name or w.startswith(name + "@")), None)
        return (words[at + 1:] if at is not None else []), None
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("--from", "--with", "--python", "-p") else 1
    return words[i + 1:], None


def from_names(npm: list[str], pypi: list[str]) -> list[Candidate]:
    """Candidates from ``NAME[@VERSION]`` (npm) and ``NAME[==VERSION]`` (PyPI)."""
    out = []
    for spec in npm:
        scope = "@" if spec.startswith("@") else ""
        name, _, version = spec.removeprefix("@").partition("@")
        out.append(Candidate(NPM, scope + name, version or None, source="command line"))
    for spec in pypi:
        name, _, version = spec.partition("==")
        out.append(Candidate(PYPI, name, version or None, source="command line"))
    return out
