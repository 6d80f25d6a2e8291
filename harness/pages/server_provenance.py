"""The server page's sections drawn from its measurement record: :func:`provenance` (what a checker
needs: the record's facts, how to re-derive it, per-tool figures, notes, compatibility, stderr),
:func:`discover_section` and :func:`last_confirmed`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from harness.core.record import NUMBERED
from harness.pages.board import Row
from harness.pages.series import Series
from harness.pages.text import as_int, md, num, one_line
from harness.util import published

NAME_LIMIT = 120
FIELD_LIMIT = 1000
STDERR_LINES = 20
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def provenance(row: Row, series: Series) -> list[str]:
    """The "Provenance" section: where the number comes from and how to re-derive it."""
    out = ["## Provenance", "", "For those who check: where the number comes from and how to re-derive it.", ""]
    out += _facts(row, series)
    out += _verify(row)
    out += _tools(row)
    out += _notes(row)
    out += _compatibility(row)
    out += _stderr(row)
    return out


def _table(pairs: list[tuple[str, str]]) -> list[str]:
    return ["| Field | Value |", "|---|---|", *(f"| {k} | {v} |" for k, v in pairs), ""]


def _facts(row: Row, series: Series) -> list[str]:
    r, entry, iso = row.record, row.entry, row.isolation
    out = ["### Measurement record", ""]
    if r is None:
        pairs = [("Status", row.status), ("Launch command", md(entry.command or entry.url, FIELD_LIMIT))]
        return out + ["No measurement is on record yet.", ""] + _table(pairs) + _catalog(row)
    sha = r.get("canonicalSha256")
    pairs = [
        ("Status", row.status),
        ("Tokens (o200k\\_base)", num(row.tokens)),
        ("Tools", num(row.tool_count)),
        ("Captured (first taken)", md(r.get("measuredAt"), NAME_LIMIT) or "not on record"),
        ("Last confirmed", last_confirmed(r, series) or "not since it was captured"),
        ("Confirmed by a second launch", _confirmed(r)),
        ("Launch command", md(r.get("launchCommand"), FIELD_LIMIT) or "not on record"),
        ("Env var names (values never recorded)", md(", ".join(map(str, r.get("envVarNames") or [])), FIELD_LIMIT) or "none"),
        ("Isolation", md(iso.get("mode"), NAME_LIMIT) or "not on record"),
        ("Architecture", md(iso.get("arch"), NAME_LIMIT) or "architecture not on record"),
        ("Operating system", md(iso.get("os"), NAME_LIMIT) or "not on record"),
        ("Image", md(iso.get("image"), NAME_LIMIT) or "none"),
        ("Runtimes", _runtimes(iso.get("runtimes"))),
        ("Protocol revision requested", md(r.get("requestedProtocolVersion"), NAME_LIMIT) or "not on record"),
        ("Protocol revision negotiated", md(r.get("negotiatedProtocolVersion"), NAME_LIMIT) or "not captured"),
        ("Server name and version", md(" ".join(one_line(x, NAME_LIMIT) for x in (r.get("serverName"), r.get("serverVersion")) if x)) or "not sent"),
        ("Canonical SHA-256", f"`{sha}`" if isinstance(sha, str) and _HEX64.match(sha) else "none"),
        ("Canonical length", f"{num(as_int(r.get('canonicalLength')))} bytes" if as_int(r.get("canonicalLength")) else "none"),
        ("Budget of the published attempt", f"{num(as_int(r.get('timeoutMs')))} ms" if as_int(r.get("timeoutMs")) else "not on record"),
        ("Harness version", md(r.get("harnessVersion"), NAME_LIMIT) or "not on record"),
    ]
    return out + _table(pairs) + _catalog(row)


def last_confirmed(record: Mapping[str, Any], series: Series) -> str | None:
    """The newest history.csv date, on or after the capture's day, whose row has the record's
    status and number (``None`` when there is none)."""
    day = str(record.get("measuredAt") or "")[:10]
    tokens = as_int(record.get("totalTokens"))
    dates = [h.date for h in (*series.left_out, *series.rows)
             if h.date >= day and h.status == record.get("status") and h.tokens == tokens]
    return max(dates) if dates else None


def _confirmed(record: Mapping[str, Any]) -> str:
    if record.get("status") not in NUMBERED:
        return "—"
    value = record.get("confirmed")
    labels: dict[object, str] = {True: "yes", False: "**no — unconfirmed (single launch)**"}
    return labels.get(value, "not on record")


def _runtimes(runtimes: object) -> str:
    if not isinstance(runtimes, dict) or not runtimes:
        return "not on record"
    return md(", ".join(f"{k} {v if v is not None else 'absent'}" for k, v in sorted(runtimes.items())), FIELD_LIMIT)


def _catalog(row: Row) -> list[str]:
    e = row.entry
    pairs = [("Category", md(e.category, NAME_LIMIT) or "—"), ("Package", md(e.package, NAME_LIMIT) or "—"),
             ("Repository", md(e.repo, FIELD_LIMIT) or "—")]
    if e.not_applicable:
        pairs.append(("Declared not applicable", md(e.not_applicable.reason, FIELD_LIMIT)))
    if e.launch_note:
        pairs.append(("Launched unlike its documentation", md(e.launch_note, FIELD_LIMIT)))
    if e.notes:
        pairs.append(("Catalog note", md(e.notes, FIELD_LIMIT)))
    return ["### Catalog entry", "", *_table(pairs)]


def _verify(row: Row) -> list[str]:
    if row.record is None or row.record.get("rawToolsCapture") is None:
        return []
    return ["### Verify it", "", "Re-derive the number from the record's own capture:", "", "```sh",
            f"mcp-context-cost verify {published.record(row.name)}", "```", ""]


def _tools(row: Row) -> list[str]:
    tools = row.fields.get("tools") or []
    if row.tokens is None:
        return []
    out = ["### Per-tool diagnostics", "", "Each tool's JSON counted alone, in server order. They do not add up to "
           "the headline (tokens merge across the seams between tools); the breakdown above does.", ""]
    if not tools:
        return out + ["The server listed no tools.", ""]
    out += ["| Tool | Tokens | Description tokens | Input schema tokens | Note |", "|---|---:|---:|---:|---|"]
    for t in tools:
        t = t if isinstance(t, dict) else {}
        note = t.get("note") or t.get("divergence")
        out.append(f"| {md(t.get('name'), NAME_LIMIT) or '—'} | {num(as_int(t.get('tokens')))} | "
                   f"{num(as_int(t.get('descriptionTokens')))} | {num(as_int(t.get('inputSchemaTokens')))} | "
                   f"{md(note, FIELD_LIMIT)} |")
    return out + [""]


def discover_section(row: Row) -> list[str]:
    """The separate figure listed under the server's own revision, apart from the headline."""
    d = row.fields.get("discover")
    if not isinstance(d, dict):
        return []
    supported = d.get("supportedVersions")
    pairs = [("Revision it answered under", md(d.get("protocolVersion"), NAME_LIMIT) or "not on record"),
             ("Tokens", num(as_int(d.get("totalTokens")))), ("Tools", num(as_int(d.get("toolCount")))),
             ("Revisions the server named", md(", ".join(map(str, supported)), FIELD_LIMIT) if isinstance(supported, list) and supported else "none named"),
             ("Canonical SHA-256", f"`{d['canonicalSha256']}`" if _HEX64.match(str(d.get("canonicalSha256"))) else "none")]
    return ["## Separate figure: tools listed under the server's own revision", "",
            "This is **not** the headline. The headline is defined by `initialize` at the revision this "
            f"harness requests, which the server refused, so the status stays {row.status}. The tools it "
            "lists when asked under a revision it names are counted the same way and shown here apart.",
            "", *_table(pairs)]


def _notes(row: Row) -> list[str]:
    if not row.notes:
        return []
    return ["### Notes", "", *(f"- {md(n, FIELD_LIMIT * 4)}" for n in row.notes), ""]


def _compatibility(row: Row) -> list[str]:
    """The record's ``compatibility`` line and findings: which strict clients would reject what the
    server sent (``harness.probe.compatibility``); nothing for a record without one."""
    compat = row.fields.get("compatibility")
    if not isinstance(compat, dict) or not isinstance(compat.get("summary"), str):
        return []
    findings = [f for f in compat.get("findings") or [] if isinstance(f, dict)]
    lines = ["## Compatibility with strict clients", "", md(compat["summary"], FIELD_LIMIT * 2), ""]
    for finding in findings:
        who = ", ".join(str(c) for c in finding.get("rejectedBy") or []) or "no official client"
        lines.append(f"- {md(finding.get('what'), FIELD_LIMIT)} — rejected by: {md(who, NAME_LIMIT)}")
    checked = md(compat.get("checkedAgainst"), FIELD_LIMIT)
    return lines + ([""] if findings else []) + ([f"Checked against: {checked}", ""] if checked else [])


def _stderr(row: Row) -> list[str]:
    tail = row.fields.get("stderrTail")
    if not isinstance(tail, str) or not tail.strip():
        return []
    lines = [md(line, 300) for line in tail.splitlines() if line.strip()][-STDERR_LINES:]
    return ["### Standard error (last lines)", "", *(f"> {line}<br>" for line in lines), ""]
