"""What npm and PyPI say about a package, read as their clients read it: ``Package``, ``parse_npm``,
``parse_pypi``; ``LiveSource`` asks the registries (bounded), ``RecordedSource`` replays recorded
answers. ``MetadataError`` names the package and why.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import zipfile
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from urllib.parse import urljoin

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.util import atomic, bounded

NPM, PYPI = "npm", "pypi"
PYPI_URL = os.environ.get("MCP_CONTEXT_COST_PYPI_URL", "https://pypi.org").rstrip("/")
MAX_DOC_BYTES = 8 * 1024 * 1024  # a project JSON of a package with thousands of releases is ~5 MiB
MAX_WHEEL_BYTES = 40 * 1024 * 1024
DEADLINE_SECONDS = 60.0
# The fields of ``npm view`` this module reads (the rest of a packument is not recorded).
NPM_FIELDS = ("name", "version", "bin", "keywords", "repository", "engines", "dependencies", "dist-tags",
              "description", "homepage")
# What marks a package as an MCP server when its keywords do not say so.
MCP_DEPENDENCIES = {"@modelcontextprotocol/sdk", "fastmcp", "mcp", "@mastra/mcp", "mcp-framework", "mcp-proxy"}
MCP_KEYWORDS = re.compile(r"^(?:mcp|mcp[-_ ]server|model[-_ ]?context[-_ ]?protocol|modelcontextprotocol)$", re.I)


class MetadataError(RuntimeError):
    """The registry does not know the package, or its answer cannot be read."""


@dataclass(frozen=True)
class Package:
    """One release: ``latest`` (newest release), ``bins`` (command → target), ``runtime`` (npm
    ``engines.node`` or PyPI ``Requires-Python``).
    """

    registry: str
    name: str
    version: str
    latest: str
    bins: dict[str, str] = field(default_factory=dict)
    keywords: tuple[str, ...] = ()
    repository: str | None = None
    runtime: str | None = None
    dependencies: tuple[str, ...] = ()
    description: str = ""

    @property
    def is_mcp(self) -> bool:
        """Whether its keywords, name or description say MCP server, or it depends on an MCP SDK."""
        return (any(MCP_KEYWORDS.match(k) for k in self.keywords)
                or any(d.lower() in MCP_DEPENDENCIES for d in self.dependencies)
                or "mcp" in re.split(r"[^a-z0-9]+", self.name.lower())
                or bool(re.search(r"\bMCP\b|model context protocol", self.description, re.IGNORECASE)))


# ---------------------------------------------------------------- parsing raw documents

def parse_npm(doc: object, name: str) -> Package:
    """A Package from ``npm view NAME[@V] --json`` output."""
    if isinstance(doc, list):  # a range matching several versions: npm answers one object each
        doc = doc[-1] if doc else None
    if not isinstance(doc, dict) or not isinstance(doc.get("version"), str):
        raise MetadataError(f"npm: {name}: no such package or version")
    bins = doc.get("bin") or {}
    if isinstance(bins, str):  # "bin": "cli.js" means one command named like the package
        bins = {name.rsplit("/", 1)[-1]: bins}
    engines = got if isinstance(got := doc.get("engines"), dict) else {}
    tags = got if isinstance(got := doc.get("dist-tags"), dict) else {}
    return Package(
        registry=NPM, name=str(doc.get("name") or name), version=doc["version"],
        latest=str(tags.get("latest") or doc["version"]),
        bins={str(k): str(v) for k, v in bins.items()} if isinstance(bins, dict) else {},
        keywords=tuple(str(k) for k in doc.get("keywords") or () if isinstance(k, str)),
        repository=_repo_url(doc.get("repository")),
        runtime=str(engines["node"]) if isinstance(engines.get("node"), str) else None,
        dependencies=tuple(sorted(doc.get("dependencies") or {})) if isinstance(doc.get("dependencies"), dict) else (),
        description=str(doc.get("description") or ""),
    )


def parse_pypi(project: object, dist: dict[str, str] | None, name: str, version: str | None) -> Package:
    """A Package from PyPI's project JSON and the wheel's ``entry_points.txt``/``METADATA`` (``dist``)."""
    if not isinstance(project, dict) or not isinstance(project.get("info"), dict):
        raise MetadataError(f"pypi: {name}: no such project")
    info = project["info"]
    latest = str(info.get("version") or "")
    chosen = version or latest
    if version and version not in (project.get("releases") or {}):
        raise MetadataError(f"pypi: {name}: no release {version}")
    meta = HeaderParser().parsestr(dist.get("METADATA", "")) if dist and dist.get("METADATA") else None
    keywords = (meta.get("Keywords") if meta else None) or info.get("keywords") or ""
    requires = (meta.get_all("Requires-Dist") if meta else None) or info.get("requires_dist") or []
    urls = dict(info.get("project_urls") or {})
    if meta:
        for value in meta.get_all("Project-URL") or []:
            label, _, url = value.partition(",")
            urls.setdefault(label.strip(), url.strip())
    return Package(
        registry=PYPI, name=str(info.get("name") or name), version=chosen, latest=latest,
        bins=_console_scripts(dist.get("entry_points.txt", "") if dist else ""),
        keywords=tuple(k for k in re.split(r"[,\s]+", keywords) if k),
        repository=_pypi_repo(urls, info.get("home_page")),
        runtime=(meta.get("Requires-Python") if meta else None) or info.get("requires_python") or None,
        dependencies=tuple(sorted({re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0] for r in requires if r})),
        description=str(info.get("summary") or ""),
    )


def _console_scripts(text: str) -> dict[str, str]:
    scripts, section = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
        elif section == "console_scripts" and "=" in line:
            key, _, value = line.partition("=")
            scripts[key.strip()] = value.strip()
    return scripts


_GIT_URL = re.compile(r"^(?:git\+)?(?:https?|git|ssh)://(?:git@)?([^/]+)/(.+?)(?:\.git)?/?$")


def _repo_url(repo: object) -> str | None:
    url = repo.get("url") if isinstance(repo, dict) else repo
    if not isinstance(url, str):
        return None
    url = url.strip()
    if re.fullmatch(r"(?:github:)?[\w.-]+/[\w.-]+", url):
        return f"https://github.com/{url.removeprefix('github:')}"
    if url.startswith("git@"):
        url = "ssh://" + url.replace(":", "/", 1)
    match = _GIT_URL.match(url)
    return f"https://{match.group(1)}/{match.group(2)}" if match else None


def _pypi_repo(urls: dict, home: object) -> str | None:
    for label in sorted(urls, key=lambda k: (not re.search(r"source|repo|code|github", k, re.I), k)):
        url = str(urls[label])
        if re.match(r"https?://(?:github\.com|gitlab\.com|codeberg\.org|bitbucket\.org)/[^/]+/[^/]+", url):
            return _repo_url(url) or url
    return _repo_url(home) if isinstance(home, str) and "github.com" in home else None


def newest(versions: list[str]) -> str | None:
    """The highest final release (a pre-release only when there is nothing else)."""
    parsed = []
    for text in versions:
        try:
            parsed.append((Version(text), text))
        except InvalidVersion:
            continue
    final = [p for p in parsed if not p[0].is_prerelease] or parsed
    return max(final)[1] if final else None


# ---------------------------------------------------------------- sources

class RecordedSource:
    """Registry answers recorded under ``root`` (``npm/<name>@<version>.json``, ``pypi/<name>.json``,
    ``pypi/<name>@<version>.dist.json``).
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def npm(self, name: str, version: str | None = None) -> Package:
        return parse_npm(self._load("npm", _file_name(name, version)), name)

    def pypi(self, name: str, version: str | None = None) -> Package:
        key = str(canonicalize_name(name))
        project = self._load("pypi", _file_name(key, None))
        chosen = version or (project.get("info") or {}).get("version")
        try:
            dist = self._load("pypi", _file_name(key, chosen, ".dist.json"))
        except MetadataError:
            dist = None
        return parse_pypi(project, dist, name, version)

    def _load(self, registry: str, file: str) -> dict:
        path = self.root / registry / file
        try:
            return json.loads(bounded.read_regular(path, MAX_DOC_BYTES))
        except (OSError, ValueError) as exc:
            raise MetadataError(f"{registry}: no recorded document {file} ({exc})") from None


class LiveSource:
    """The registries: ``npm view`` and PyPI's JSON API; ``record_to`` also writes each answer there."""

    def __init__(self, record_to: str | os.PathLike | None = None):
        self.record_to = Path(record_to) if record_to else None

    def npm(self, name: str, version: str | None = None) -> Package:
        spec = f"{name}@{version}" if version else name
        try:
            done = subprocess.run(["npm", "view", spec, *NPM_FIELDS, "--json"], capture_output=True,
                                  timeout=DEADLINE_SECONDS, stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MetadataError(f"npm: {name}: npm view failed ({type(exc).__name__})") from None
        if len(done.stdout) > MAX_DOC_BYTES:
            raise MetadataError(f"npm: {name}: answer larger than {MAX_DOC_BYTES} bytes")
        try:
            doc = json.loads(done.stdout or b"null")
        except ValueError:
            raise MetadataError(f"npm: {name}: npm view printed no JSON (exit {done.returncode})") from None
        if isinstance(doc, dict) and "error" in doc:
            code = (doc["error"] or {}).get("code", "error") if isinstance(doc["error"], dict) else "error"
            raise MetadataError(f"npm: {name}: {code}")
        self._record("npm", _file_name(name, version), doc)
        return parse_npm(doc, name)

    def pypi(self, name: str, version: str | None = None) -> Package:
        url = f"{PYPI_URL}/pypi/{canonicalize_name(name)}/json"
        project = self._json(url, name)
        for files in (project.get("releases") or {}).values():  # a mirror may answer relative file URLs
            for f in files if isinstance(files, list) else ():
                if isinstance(f, dict) and isinstance(f.get("url"), str):
                    f["url"] = urljoin(url, f["url"])
        key = str(canonicalize_name(name))
        self._record("pypi", _file_name(key, None), _trim_project(project))
        chosen = version or (project.get("info") or {}).get("version")
        dist = self._wheel_texts(project, chosen, name)
        if dist is not None:
            self._record("pypi", _file_name(key, chosen, ".dist.json"), dist)
        return parse_pypi(project, dist, name, version)

    def _json(self, url: str, name: str) -> dict:
        try:
            return json.loads(bounded.fetch(url, DEADLINE_SECONDS, MAX_DOC_BYTES))
        except (OSError, ValueError) as exc:
            raise MetadataError(f"pypi: {name}: {str(exc)[:200]}") from None

    def _wheel_texts(self, project: dict, version: str | None, name: str) -> dict[str, str] | None:
        files = (project.get("releases") or {}).get(version) or []
        wheels = [f for f in files if isinstance(f, dict) and str(f.get("filename", "")).endswith(".whl")]
        wheels.sort(key=lambda f: ("none-any" not in f["filename"], f["filename"]))
        if not wheels:
            return None
        try:
            data = bounded.fetch(wheels[0]["url"], DEADLINE_SECONDS, MAX_WHEEL_BYTES)
            with zipfile.ZipFile(io.BytesIO(data)) as wheel:
                texts = {}
                for member in wheel.namelist():
                    base = member.rsplit("/", 1)[-1]
                    if ".dist-info/" in member and base in ("entry_points.txt", "METADATA"):
                        if wheel.getinfo(member).file_size <= MAX_DOC_BYTES:
                            text = wheel.read(member).decode("utf-8", "replace")
                            # METADATA's headers only: its body is the README, which nothing here reads
                            texts[base] = text.split("\n\n", 1)[0] + "\n" if base == "METADATA" else text
                return texts
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise MetadataError(f"pypi: {name}: wheel unreadable ({str(exc)[:120]})") from None

    def _record(self, registry: str, file: str, doc: object) -> None:
        if self.record_to is not None:
            atomic.write_text(self.record_to / registry / file, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def _trim_project(project: dict) -> dict:
    """The project JSON with only what is read."""
    info_keys = ("name", "version", "keywords", "summary", "project_urls", "home_page", "requires_python",
                 "requires_dist")
    releases = {v: [{"filename": f.get("filename"), "url": f.get("url")} for f in files if isinstance(f, dict)]
                for v, files in (project.get("releases") or {}).items()}
    return {"info": {k: (project.get("info") or {}).get(k) for k in info_keys}, "releases": releases}


def _file_name(name: str, version: str | None, suffix: str = ".json") -> str:
    safe = name.replace("/", "__")
    return f"{safe}@{version}{suffix}" if version else f"{safe}{suffix}"


def source(recorded: str | os.PathLike | None = None, record_to: str | os.PathLike | None = None):
    """The recorded answers under ``recorded`` when given, else the live registries."""
    return RecordedSource(recorded) if recorded else LiveSource(record_to)


def lookup(src, registry: str, name: str, version: str | None = None) -> Package:
    if registry == NPM:
        return src.npm(name, version)
    if registry == PYPI:
        return src.pypi(name, version)
    raise MetadataError(f"{registry}: {name}: registry not supported (npm and pypi are)")
