"""Catalog entries proposed from real sources (``harness.db.import_sources``), checked against
their registry (``propose``), launched once and sorted (``triage``, ``classify``) (docs/CATALOG.md).
A credential ask, or a failure saying a variable is required, naming undeclared variables is
launched once more with them declared.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from harness.core.record import NUMBERED, Record
from harness.db import package_meta
from harness.db.catalog import Catalog, CatalogError, Entry, load_catalog
from harness.db.catalog_text import dump_entry
from harness.db.import_sources import Candidate
from harness.db.launch_gate import LaunchGate
from harness.db.package_meta import NPM, MetadataError, Package
from harness.db.targets import target_for
from harness.probe import build_record as record
from harness.probe import harness_bug, isolation, node_engine, resolve, side_lists
from harness.probe import status as status_rules
from harness.probe import measure as measuring
from harness.util import names, published, untrusted

LISTS_TOOLS, NEEDS_CREDENTIAL, NEEDS_RUNTIME, BROKEN = "lists-tools", "needs-credential", "needs-runtime", "broken"
NEEDS_SETTING = "needs-setting"  # it asked for a place (a directory, path, file or URL) its entry must give
OUTCOMES = (LISTS_TOOLS, NEEDS_CREDENTIAL, NEEDS_SETTING, NEEDS_RUNTIME, BROKEN)
ACCEPTED = (LISTS_TOOLS, NEEDS_CREDENTIAL)  # a server a user can run and read: what the catalog is for
DEFAULT_TIMEOUT_SECONDS = 90.0
MAX_EVIDENCE_CHARS = 300
# Failure text that says the machine's runtime is too old or missing, in npm's, node's and uv's words.
_RUNTIME = re.compile(r"EBADENGINE|Unsupported engine|declares engines\.node"
                      r"|requires? (?:node(?:\.js)?|Node(?:\.js)?) (?:version )?[>v]?=?\s*\d"
                      r"|engine \"node\" is incompatible|No interpreter found for Python|does not satisfy Python"
                      r"|requires-python|is not supported by this version of Node", re.IGNORECASE)


@dataclass
class Proposal:
    """A candidate as a catalog ``entry`` or the ``reason`` there is none; ``outcome`` after triage."""

    candidate: Candidate
    entry: dict | None = None
    reason: str | None = None
    package: Package | None = None
    outcome: str | None = None
    evidence: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.entry["name"] if self.entry else self.candidate.package


# ---------------------------------------------------------------- proposing entries

def propose(candidates: list[Candidate], catalog: Catalog, src) -> list[Proposal]:
    """A proposal per candidate, in input order; names unique against the catalog."""
    known_packages = {_package_key(e.package) for e in catalog.entries if e.package}
    known_urls = {e.url for e in catalog.entries if e.url}
    taken = {e.name for e in catalog.entries}
    out = []
    for cand in candidates:
        prop = Proposal(cand)
        out.append(prop)
        if cand.registry == "url":
            if cand.package in known_urls:
                prop.reason = "already in the catalog"
            elif cand.problem:
                prop.reason = cand.problem
            else:
                prop.entry = _url_entry(cand, taken)
            continue
        if _package_key(cand.package) in known_packages:
            prop.reason = "already in the catalog"
            continue
        if cand.problem:
            prop.reason = cand.problem
            continue
        try:
            pkg = package_meta.lookup(src, cand.registry, cand.package, cand.version)
        except MetadataError as exc:
            prop.reason = str(exc)
            continue
        prop.package = pkg
        known_packages.add(_package_key(cand.package))
        if not pkg.is_mcp:
            prop.reason = "its metadata does not say it is an MCP server (no mcp keyword, no MCP SDK dependency)"
            continue
        command, why = launch_command(cand, pkg)
        if command is None:
            prop.reason = why
            continue
        prop.entry = _entry(cand, pkg, command, taken)
    for prop in out:  # what the catalog would refuse is never launched
        if prop.entry is not None and (problem := _refused(prop.entry)):
            prop.entry, prop.reason = None, problem
    return out


def _refused(entry: dict) -> str | None:
    """Why the catalog loader would refuse ``entry``, or None."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / published.CATALOG
        path.write_text("servers:\n" + dump_entry(entry), encoding="utf-8")
        try:
            load_catalog(path)
        except CatalogError as exc:
            return "the catalog would refuse it: " + exc.errors[0].split(": ", 1)[-1]
    return None


def _package_key(package: str) -> str:
    return package.lower() if package.startswith("@") else str(canonicalize_name(package))


def launch_command(cand: Candidate, pkg: Package) -> tuple[str | None, str | None]:
    """The package's command pinned to ``pkg.version``, or ``(None, why not)``."""
    tail = "".join(" " + shlex.quote(a) for a in cand.args)
    if pkg.registry == NPM:
        unscoped = pkg.name.rsplit("/", 1)[-1]
        if not pkg.bins:
            return None, "the package declares no bin: npx has nothing to run"
        if len(pkg.bins) == 1 or unscoped in pkg.bins:  # what npx runs without being told
            return f"npx -y {pkg.name}@{pkg.version}{tail}", None
        chosen = _mcp_script(pkg.bins)
        if chosen is None:
            return None, f"the package declares several bins ({', '.join(sorted(pkg.bins))}) and none names MCP"
        return f"npx -y --package={pkg.name}@{pkg.version} {chosen}{tail}", None
    script = _pypi_script(pkg)
    if script is None:
        return None, f"the package declares several console scripts ({', '.join(sorted(pkg.bins))}) and none names MCP"
    if canonicalize_name(script) == canonicalize_name(pkg.name):
        return f"uvx {script}@{pkg.version}{tail}", None
    return f"uvx --from {pkg.name}=={pkg.version} {script}{tail}", None


def _pypi_script(pkg: Package) -> str | None:
    if not pkg.bins:  # no wheel to read: uvx runs the script named like the package
        return pkg.name
    for script in pkg.bins:
        if canonicalize_name(script) == canonicalize_name(pkg.name):
            return script
    return next(iter(pkg.bins)) if len(pkg.bins) == 1 else _mcp_script(pkg.bins)


def _mcp_script(bins: dict[str, str]) -> str | None:
    named = sorted(b for b in bins if "mcp" in b.lower())
    return named[0] if len(named) == 1 else None


def slug(package: str) -> str:
    """A catalog name from a package name (``@scope/name`` → ``scope-name``), at most 64 characters."""
    scope, _, rest = package.lower().lstrip("@").rpartition("/")
    if scope and rest.startswith(scope):  # @acme/acme-mcp is acme-mcp
        scope = ""
    text = re.sub(r"[^a-z0-9]+", "-", f"{scope}-{rest}").strip("-")
    return text[:64].rstrip("-") or "server"


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken or not names.is_catalog_name(name):
        name = f"{base[:60]}-{n}"
        n += 1
    taken.add(name)
    return name


def _category(cand: Candidate) -> str:
    """``vendor-official`` for a registry name in a verified domain namespace, else ``community``."""
    ns = (cand.server_name or "").split("/", 1)[0]
    return "vendor-official" if ns and "." in ns and not ns.startswith("io.github.") else "community"


def _entry(cand: Candidate, pkg: Package, command: str, taken: set[str]) -> dict:
    entry: dict = {"name": _unique(slug(pkg.name), taken), "command": command, "package": pkg.name}
    if cand.env:
        entry["env"] = list(cand.env)
    if cand.set_env:
        entry["setEnv"] = dict(cand.set_env)
    entry["category"] = _category(cand)
    repo = pkg.repository or cand.repository
    if repo and re.match(r"^https?://[^\s/?#]+\S*$", repo):
        entry["repo"] = repo
    return entry


def _url_entry(cand: Candidate, taken: set[str]) -> dict:
    base = slug((cand.server_name or cand.package).rsplit("/", 1)[-1])
    entry = {"name": _unique(base, taken), "url": cand.package, "category": _category(cand)}
    if cand.repository:
        entry["repo"] = cand.repository
    return entry


# ---------------------------------------------------------------- triage

async def triage(proposals: list[Proposal], isolation_mode: str, *, concurrency: int = 2,
                 timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS, say=lambda line: None) -> None:
    """Launch each proposal with an entry once, as a sweep would, and set its outcome."""
    gate = LaunchGate(max(1, concurrency))
    admitted = asyncio.Semaphore(max(1, concurrency))
    iso = isolation.describe(isolation_mode)

    async def launch(entry: dict[str, Any]) -> Record:
        target = target_for(_as_entry(entry, timeout_seconds))
        try:
            async with gate.slot():
                target = await resolve.resolved_target(target, isolation_mode, pass_declared_values=False)
            launcher = gate.wrap(side_lists.with_side_lists(
                measuring._default_launcher(target, False, isolation_mode, None)))
            result = await measuring.measure(target, isolation=isolation_mode, pass_declared_values=False,
                                             launcher=launcher, dual=False)
            await result.ended()
            return record.build(result, iso)
        except Exception as exc:  # noqa: BLE001 - a harness bug is this proposal's evidence, not the run's end
            return record.build(harness_bug.measurement(target, exc), iso)

    async def one(prop: Proposal, first: dict[str, Any]) -> None:
        async with admitted:
            rec = await launch(first)
            prop.outcome, prop.evidence = classify(rec, prop.package)
            asked = (named_variables(rec, first) if prop.outcome == NEEDS_CREDENTIAL
                     else named_variables(rec, first, asking_only=True) if prop.outcome in (BROKEN, NEEDS_SETTING)
                     else [])
            if asked:  # its users set what it asks for: launch again with those names given dummy values
                entry = with_env(first, asked)
                again = await launch(entry)
                outcome, evidence = classify(again, prop.package)
                if outcome in ACCEPTED:
                    prop.entry, prop.outcome, rec = entry, outcome, again
                    prop.evidence = _cut(f"{evidence}, with {', '.join(asked)} set as its first launch asked")
            say(f"{prop.name}: {prop.outcome} ({rec['status']}) {prop.evidence}")

    await asyncio.gather(*(one(p, p.entry) for p in proposals if p.entry is not None))


_VARIABLE = re.compile(r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![A-Za-z0-9_])")
MAX_ASKED_VARIABLES = 4
_NOT_ASKED = re.compile(r"ERR_|HTTP_|NODE_|NPM_|PYTHON|UV_|PATH$|HOME$|MCP_CONTEXT_COST")
# Words by which a failing server says a variable must be given ("X environment variable is required",
# "Missing required environment variable: X", "Please set X", "X is not defined"), and the Chinese
# servers' "please set" / "environment variable" / "not set" ("請設定環境變數: X", "未设置 X").
_ASKS = re.compile(r"\b(?:required|requires|missing|must be (?:set|provided|defined)|(?:is|are) not (?:set|defined|provided)"
                   r"|must (?:specify|provide|give|pass|set)"
                   r"|please (?:set|provide|export|define))\b"
                   r"|[請请](?:設定|设定|設置|设置|提供|配置)|環境變數|环境变量|未(?:設定|设定|設置|设置|配置|提供)", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[;\n]|\.(?:\s|$)")


def named_variables(rec: Record, entry: dict[str, Any], *, asking_only: bool = False) -> list[str]:
    """The undeclared ``UPPER_SNAKE`` variable names a record's words name, in order, at most
    :data:`MAX_ASKED_VARIABLES`; ``asking_only``: only names in a clause asking for a variable, else
    (a credential ask's names) places left out (``status_rules.location_name``: a dummy is no directory)."""
    declared = set(entry.get("env", ())) | set(entry.get("setEnv", {}))
    text = " ".join(str(n) for n in rec.get("notes") or ())
    if asking_only:
        text = " ".join(clause for clause in _CLAUSE_END.split(text) if _ASKS.search(clause))
    found: list[str] = []
    for name in _VARIABLE.findall(text):
        if name not in declared and name not in found and not _NOT_ASKED.match(name) \
                and (asking_only or not status_rules.location_name(name)):
            found.append(name)
    return found[:MAX_ASKED_VARIABLES]


def with_env(entry: dict[str, Any], names_: list[str]) -> dict[str, Any]:
    """``entry`` with ``names_`` added to its ``env``, the field in its place in the catalog's order."""
    env = [*entry.get("env", ()), *names_]
    out: dict = {}
    for key, value in entry.items():
        if key in ("setEnv", "category", "repo") and "env" not in out:
            out["env"] = env
        if key != "env":
            out[key] = value
    out.setdefault("env", env)
    return out


def _as_entry(entry: dict, timeout_seconds: float) -> Entry:
    return Entry(name=entry["name"], command=entry.get("command"), url=entry.get("url"),
                 package=entry.get("package"), env=tuple(entry.get("env", ())),
                 set_env=tuple(sorted(entry.get("setEnv", {}).items())), timeout_seconds=timeout_seconds)


def classify(rec: Record, pkg: Package | None) -> tuple[str, str]:
    """``(outcome, evidence)`` for a triage launch's record."""
    status = rec["status"]
    if status in NUMBERED:
        return LISTS_TOOLS, f"listed {rec['toolCount']} tools"  # the number is the sweep's to publish
    evidence = _cut(rec["notes"][0] if rec.get("notes") else status)
    if status == "auth-required":
        return NEEDS_CREDENTIAL, evidence
    if rec.get("environmentEvidence") or status == "unreachable":
        return NEEDS_RUNTIME, evidence
    if pkg is not None and pkg.registry == NPM and pkg.runtime and node_engine.unsatisfiable(pkg.runtime):
        return BROKEN, evidence  # a Node no release meets: the package's mistake, not this machine's age
    if _RUNTIME.search(" ".join(rec.get("notes") or ())):
        return NEEDS_RUNTIME, evidence
    if pkg is not None and pkg.registry == NPM and pkg.runtime and not node_engine.satisfies(pkg.runtime):
        current = ".".join(map(str, node_engine.node_version() or ())) or "none"
        return NEEDS_RUNTIME, _cut(f"declares node {pkg.runtime}; this machine has {current}: {evidence}")
    said = " ".join(str(n) for n in rec.get("notes") or ())
    if not status_rules.package_crash(said) and credential_not_got(said):
        return NEEDS_CREDENTIAL, evidence
    if not status_rules.package_crash(said) and (asked := setting_asked(said)):
        return NEEDS_SETTING, _cut(f"{evidence}; it asked for a setting, not a credential: {asked}")
    return BROKEN, evidence


# "Failed to get the X" (retrieve, obtain, load… it; "could not", "unable to"): what it could not get, to the
# clause's end or the first word saying where or why (``credential_not_got``).
_FAILED_TO_GET = re.compile(r"\b(?:(?:failed|unable) to|could(?:n't| not)|can(?:'t|not)) (?:get|retrieve|obtain|fetch|load"
                            r"|read|find|acquire) (?:the |your |an? )?([^.;:,!?(\n]{1,80}?)(?=[.;:,!?(\n]|\s(?:from|for|in|of"
                            r"|at|on|with|by|via|using|because|due|after|before|when|while|through|within|to)\b|$)",
                            re.IGNORECASE)


def credential_not_got(text: str) -> str | None:
    """The first ``Failed to get the X`` of ``text`` (``_FAILED_TO_GET``) whose X is a credential (``Failed to get
    the API key``, ``could not load the 'ACME_TOKEN' variable``; ``status_rules.is_credential``), or ``None``."""
    return next((found.group(0) for found in _FAILED_TO_GET.finditer(text)
                 if status_rules.is_credential(found.group(1))), None)


def setting_asked(text: str) -> str | None:
    """The first clause of ``text`` asking for a place rather than a secret (``ALLOWED_DIR is required``,
    ``a directory argument is required``, ``Please set DATABASE_URL``): it asks (``_ASKS``) and names a place,
    not a secret (``status_rules.names_place``)."""
    for clause in _CLAUSE_END.split(text):
        if _ASKS.search(clause) and status_rules.names_place(clause, _VARIABLE.findall(clause)):
            return clause.strip()
    return None


def _cut(text: str) -> str:
    """One escaped line of at most ``MAX_EVIDENCE_CHARS``."""
    text = untrusted.escape(" ".join(str(text).split()), spaces=True)
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[:MAX_EVIDENCE_CHARS - 1] + "…"


def with_triage(prop: Proposal, date: dt.date) -> dict:
    """The entry with its ``triage`` field, as written to the catalog."""
    assert prop.entry is not None and prop.outcome is not None
    return {**prop.entry, "triage": {"outcome": prop.outcome, "date": date.isoformat(), "evidence": prop.evidence}}


def accepted(proposals: list[Proposal]) -> list[Proposal]:
    """The triaged proposals the catalog takes, by name."""
    return sorted((p for p in proposals if p.outcome in ACCEPTED), key=lambda p: p.name)


def summary_rows(proposals: list[Proposal]) -> list[dict]:
    """One row per candidate, for the report and the pull request's body."""
    rows = []
    for p in proposals:
        rows.append({"package": p.candidate.package, "registry": p.candidate.registry, "name": p.name,
                     "command": (p.entry or {}).get("command") or (p.entry or {}).get("url"),
                     "outcome": p.outcome or ("proposed" if p.entry else "not-proposed"),
                     "evidence": p.evidence or p.reason or "",
                     "accepted": p.outcome in ACCEPTED})
    return rows
