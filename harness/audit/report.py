"""The audit report (``schemas/audit-report.schema.json``): built from files, sessions and outcomes; redacted.

Public: ``build``, ``redact``. Shape: docs/AUDIT.md, "The report".
"""

from __future__ import annotations

import datetime as dt
from typing import Any, TypeVar, cast

from harness import METHODOLOGY_VERSION, __version__
from harness.audit import changed as changed_mod
from harness.audit import figures, posture
from harness.audit import suggest as suggest_mod
from harness.audit.claude_settings import Place
from harness.audit.client_statements import statement_for
from harness.audit.figures import Row
from harness.audit.measuring import Outcome
from harness.audit.model import ABSENT, READ, ConfigFile
from harness.audit.policy import Policy, allow_verdict, denied_by
from harness.audit.posture import Band
from harness.audit.published_reader import Lookup
from harness.audit.sessions import Session
from harness.core.tokenizer import encoding_name
from harness.probe.redact import Secrets

T = TypeVar("T")

SCHEMA_VERSION = 1
KIND = "mcp-context-cost audit"


def build(files: list[ConfigFile], sessions: list[Session], outcomes: dict[str, Outcome], *, context: int,
          isolation: str, places: list[Place], policy: Policy, band: Band, managed_path: str,
          changed: Lookup | None = None, suggest: Lookup | None = None) -> dict:
    """The report dict (gates and exit code are added by ``harness.audit.gates``)."""
    rows = {id(e): figures.row_for(e, outcomes) for f in files for e in f.entries}
    present = [f for f in files if f.state != ABSENT]
    report: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": KIND,
        "methodologyVersion": METHODOLOGY_VERSION,
        "encoding": encoding_name(),
        "harnessVersion": __version__,
        "generatedAt": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "contextWindow": context,
        "isolation": isolation,
        "searched": [{"path": f.display, "client": f.client, "state": f.state} for f in files],
        "configs": [_config(f, [rows[id(e)] for e in f.entries], context) for f in present],
        "sessions": [_session(s, rows, context, places, policy, band, managed_path) for s in sessions],
    }
    report["records"] = [statement_for(c) for c in dict.fromkeys(s["client"] or "unknown" for s in report["sessions"])]
    report["summary"] = _summary(report, outcomes)
    ordered = [(f, rows[id(e)]) for f in present for e in f.entries]
    report["changed"] = changed_mod.section(changed, _joinable(ordered)) if changed else None
    report["suggest"] = suggest_mod.section(suggest, _placeable(ordered)) if suggest else None
    return report


def _joinable(ordered: list[tuple[ConfigFile, Row]]) -> list[changed_mod.Subject]:
    """Each (identity, local name) measured, once, with the configs naming it so."""
    found: dict[tuple[str, str], changed_mod.Subject] = {}
    for cfile, row in ordered:
        if row.key is None or row.outcome is None:
            continue
        subject = found.setdefault((row.key, row.entry.name), changed_mod.Subject(
            row.entry.name, row.key, [], row.status, row.outcome.sha256 if row.outcome.numbered else None))
        _add(subject.paths, cfile.display)
    return list(found.values())


def _placeable(ordered: list[tuple[ConfigFile, Row]]) -> list[suggest_mod.Subject]:
    """Each distinct measured server, once, with its names and configs (its whole capture is placed, unfiltered)."""
    found: dict[str, suggest_mod.Subject] = {}
    for cfile, row in ordered:
        if row.key is None or row.outcome is None or not row.outcome.numbered:
            continue
        subject = found.setdefault(row.key, suggest_mod.Subject([], row.key, [], row.outcome.per_tool))
        _add(subject.names, row.entry.name)
        _add(subject.paths, cfile.display)
    return list(found.values())


def _add(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)


def _config(cfile: ConfigFile, rows: list[Row], context: int) -> dict:
    return {
        "path": cfile.display, "client": cfile.client, "scope": cfile.scope, "state": cfile.state,
        "error": cfile.error, "notes": list(cfile.notes),
        "servers": [_server(r, context) for r in rows],
        "total": figures.total(rows, context, unknown=cfile.state != READ),
        "heaviestTools": figures.heaviest_tools(rows),
        "trimPlan": figures.trim_plan(rows, context),
    }


def _server(row: Row, context: int) -> dict:
    entry = row.entry
    notes = list(row.outcome.notes) if row.outcome else []
    return {
        "name": entry.name, "scope": entry.scope, "transport": entry.transport, "launch": entry.display_launch(),
        "envNames": list(entry.env_names), "headerNames": list(entry.header_names), "identity": row.key,
        "status": row.status, "tokens": row.cost.tokens if row.cost else None,
        "toolCount": row.cost.tool_count if row.cost else None,
        "share": figures.share(row.cost.tokens, context) if row.cost else None,
        "filteredTools": row.cost.filtered if row.cost else 0,
        "toolFilter": _filter(entry), "alwaysLoad": entry.always_load, "disabled": entry.disabled,
        "unevaluated": list(entry.unevaluated), "problems": list(entry.problems), "notes": notes[:5],
        "trust": entry.trust.to_json() if entry.trust else None,
    }


def _filter(entry) -> dict | None:
    if entry.include_tools is None and not entry.exclude_tools:
        return None
    return {"include": list(entry.include_tools) if entry.include_tools is not None else None,
            "exclude": list(entry.exclude_tools)}


def _session(session: Session, rows: dict, context: int, places: list[Place], policy: Policy, band: Band,
             managed_path: str) -> dict:
    members = [rows[id(e)] for e in session.members]
    excluded = [(rows[id(e)], why) for e, why in session.excluded]
    if session.client == "claude-code":
        kept = []
        for row in members:
            denial = denied_by(row.entry, policy)
            (excluded.append((row, f"denied by {denial}")) if denial else kept.append(row))
        members = kept
    report: dict[str, Any] = {
        "client": session.client, "label": session.label, "composition": session.composition,
        "configs": [f.display for f in session.files],
        "servers": [_member(r, session, policy) for r in members],
        "excluded": [{"name": r.entry.name, "source": _source(r), "reason": why} for r, why in excluded],
        "total": None if session.refused else figures.total(members, context),
        "refused": session.refused,
        "notes": list(session.notes),
        "deferral": None,
        "record": None if session.client == "claude-code" else statement_for(session.client),
    }
    merged = posture.collapsed(members)
    if merged and report["total"] is not None:
        report["total"]["floor"] = True
        report["total"]["display"] = figures.figure(report["total"]["tokens"], True)
        report["notes"].append(f"{', '.join(sorted(set(merged)))} collapsed onto one measurement with different values: "
                               "the session total is a floor")
    if session.client == "claude-code":
        report["deferral"] = posture.section(session, members, places, policy, band, context, managed_path)
    return report


def _member(row: Row, session: Session, policy: Policy) -> dict:
    item = {"name": row.entry.name, "source": _source(row), "scope": row.entry.scope, "status": row.status,
            "tokens": row.cost.tokens if row.cost else None, "identity": row.key, "alwaysLoad": row.entry.always_load}
    if session.client == "claude-code":
        item["allow"] = allow_verdict(row.entry, policy)
    return item


def _source(row: Row) -> str:
    return row.entry.source_display or row.entry.source


def _summary(report: dict, outcomes: dict[str, Outcome]) -> dict:
    totals = [s for s in report["sessions"] if s["total"] is not None]
    costliest = max(totals, key=lambda s: (s["total"]["tokens"], s["total"]["floor"]), default=None)
    return {
        "configsFound": len(report["configs"]),
        "distinctServers": len(outcomes),
        "measuredServers": sum(1 for o in outcomes.values() if o.numbered),
        "costliestSession": costliest["label"] if costliest else None,
        "costliestSessionTotal": costliest["total"] if costliest else None,
    }


# Fields whose values are this harness's own vocabulary, never text a config or a server supplied:
# redaction leaves them alone, so an env value that happens to read "stdio" or "measured" cannot
# turn a field into something its schema rejects.
CONTROLLED = frozenset({"schemaVersion", "kind", "methodologyVersion", "encoding", "harnessVersion", "generatedAt",
                        "isolation", "state", "transport", "status", "identity", "display", "record", "posture",
                        "verdict", "action", "tier", "allow", "composition", "gate", "variable", "jsonType", "client",
                        "scope", "decidedBy", "method", "canonicalSha256", "publishedOn", "currentSince",
                        "path", "source"})
# The report's own names for the config files a session loads: paths on this machine, which is how a
# baseline pairs configs (redacted, a secret-named variable holding a path beside the config would
# turn the config's own path into ``~[redacted]cp.json``, and the unchanged config read as dropped and added).
PATH_LISTS = frozenset({"configs", "paths"})


def redact(value: T, redactor: Secrets, key: str | None = None) -> T:
    """``value`` with every config-held secret redacted outside the ``CONTROLLED`` fields."""
    if isinstance(value, dict):
        return cast(T, {k: v if k in CONTROLLED else redact(v, redactor, k) for k, v in value.items()})
    if isinstance(value, list):
        if key in PATH_LISTS and all(isinstance(item, str) for item in value):
            return cast(T, list(value))
        return cast(T, [redact(item, redactor, key) for item in value])
    return cast(T, redactor.text(value)) if isinstance(value, str) else value

