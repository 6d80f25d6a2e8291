"""Builds the record (``core.record.Record``) from a ``Measurement``, its generated notes and normalised
evidence. docs/METHODOLOGY.md, "Reproduce it".
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from harness import METHODOLOGY_VERSION, __version__
from harness.core.canonical import stringify
from harness.core.counting import count_tools
from harness.core.record import NUMBERED, Record
from harness.core.tokenizer import Uncountable
from harness.probe import compatibility
from harness.probe import isolation as iso
from harness.probe import sandbox, side_lists
from harness.probe.measure import AttemptInfo, Measurement
from harness.probe.outcome import Capture
from harness.probe.redact import Secrets
from harness.probe.status import TOO_LARGE, UNCOUNTABLE
from harness.util import atomic, published, schemas, untrusted, urls
from harness.util.bounded import MAX_RECORD_TOOLS, MAX_WRITTEN_RECORD_BYTES


# Fields the harness itself sets and the schema constrains (slugs, names, enums, timestamps): a
# secret value that happens to equal a server's slug must not turn it into "[redacted]".
NOT_SCRUBBED = ("server", "status", "measuredAt", "envVarNames", "headerNames")


def build(measurement: Measurement, isolation: dict | None = None, secrets: Secrets | None = None,
          measured_at: dt.datetime | None = None) -> Record:
    """The record for ``measurement``, validated; too many tools, too many bytes or an uncountable list gives a
    small ``too-large``/``uncountable`` record."""
    for capture in (measurement.capture, measurement.discover_capture):
        if measurement.status not in NUMBERED or capture is None or not capture.ok \
                or not isinstance(capture.tools, list):
            continue
        if len(capture.tools) > MAX_RECORD_TOOLS:
            return _refused(measurement, TOO_LARGE, f"the server listed {len(capture.tools):,} tools; a record "
                            f"holds at most {MAX_RECORD_TOOLS:,}, so no number is published", isolation,
                            secrets, measured_at)
        # The record holds the capture at least once, indented: its canonical bytes plus that
        # indentation are a floor for the record's size, known before any counting, validating or
        # writing is spent on it (indentation grows with depth squared: 8 KB of nested arrays on the
        # wire is 32 MB in a record).
        floor = len(stringify(capture.tools).encode("utf-8", "surrogatepass"))
        if floor > MAX_WRITTEN_RECORD_BYTES:
            return _refused(measurement, TOO_LARGE, f"the tool list is {floor:,} bytes of canonical JSON, over the "
                            f"{MAX_WRITTEN_RECORD_BYTES:,} a record may be, so no number is published",
                            isolation, secrets, measured_at)
        floor += indentation_bytes(capture.tools, depth=1)
        if floor > MAX_WRITTEN_RECORD_BYTES:
            return _refused(measurement, TOO_LARGE, f"the tool list is at least {floor:,} bytes of indented JSON "
                            f"in a record, over the {MAX_WRITTEN_RECORD_BYTES:,} a record may be, so no number is "
                            f"published", isolation, secrets, measured_at)
    try:
        record = _build(measurement, isolation, secrets, measured_at)
    except Uncountable as exc:
        return _refused(measurement, UNCOUNTABLE, f"the tokenizer could not count what the server sent: {exc}",
                        isolation, secrets, measured_at)
    size = len(serialize(record).encode("utf-8"))
    if size > MAX_WRITTEN_RECORD_BYTES:
        return _refused(measurement, TOO_LARGE, f"the record would be {size:,} bytes, over the "
                        f"{MAX_WRITTEN_RECORD_BYTES:,} a record may be, so no number is published",
                        isolation, secrets, measured_at)
    return record


def indentation_bytes(value: object, depth: int) -> int:
    """The bytes ``JSON.stringify(…, null, 2)`` adds to ``value`` at ``depth``, without building it."""
    extra = 0
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        children = list(item.values()) if isinstance(item, dict) else item if isinstance(item, list) else None
        if not children:
            continue
        extra += len(children) * (1 + 2 * (level + 1)) + 1 + 2 * level + (len(children) if isinstance(item, dict) else 0)
        stack.extend((child, level + 1) for child in children)
    return extra


def _refused(measurement: Measurement, status: str, why: str, isolation: dict | None,
             secrets: Secrets | None, measured_at: dt.datetime | None) -> Record:
    refused = dataclasses.replace(measurement, status=status, discover_capture=None,
                                  notes=[*measurement.notes, f"{status}: {why}"])
    return _build(refused, isolation, secrets, measured_at)


def _build(measurement: Measurement, isolation: dict | None, secrets: Secrets | None,
           measured_at: dt.datetime | None) -> Record:
    target, capture = measurement.target, measurement.capture
    redactor = secrets or measurement.secrets or Secrets.for_target(target)
    notes = [redactor.text(n) for n in measurement.notes]
    record = _header(measurement, isolation or iso.describe(), measured_at)
    record |= _server_fields(capture, redactor)
    record |= _numbers(measurement, redactor, notes)
    infos: list[AttemptInfo | None] = [*measurement.attempt_info] or [None] * len(measurement.attempts)
    record["attempts"] = [_attempt(a, redactor, info) for a, info in zip(measurement.attempts, infos)]
    if measurement.status not in NUMBERED:
        record["stderrTail"] = redactor.text(capture.stderr_tail) or None
    if capture.noise_lines:
        notes.append(f"{capture.noise_lines} non-JSON stdout line(s) skipped, e.g. {redactor.text(capture.noise_sample[0])!r}")
    if capture.ok and not capture.tools and capture.zero_tools_reason:
        notes.append(capture.zero_tools_reason)
    elif capture.ok and not capture.tools:
        declared = "declared" if capture.declared_tools_capability else "did not declare"
        notes.append(f"zero tools: the server answered tools/list with an empty array; it {declared} a tools capability at initialize")
    if measurement.discover_capture is not None:
        record["discover"] = _discover_figure(measurement.discover_capture, redactor)
    if measurement.status in NUMBERED and capture.side_lists is not None:
        record["sideLists"] = side_lists.to_record(  # side figures, never part of the headline
            capture.side_lists, redactor)
    for key, value in measurement.extra.items():
        record[key] = redactor.text(value) if isinstance(value, str) else value
    record["notes"] = notes
    _settle(record, measurement)
    record["rawToolsCapture"] = record.pop("rawToolsCapture")  # keep the large field last
    record = {key: value if key in NOT_SCRUBBED else redactor.scrub(value) for key, value in record.items()}
    schemas.check("measurement", record, where=published.record(target.name))
    return cast(Record, record)


def _header(m: Measurement, isolation: dict, measured_at: dt.datetime | None) -> dict:
    when = (measured_at or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    return {
        "methodologyVersion": METHODOLOGY_VERSION,
        "provider": "tiktoken",
        "encoding": "o200k_base",
        "server": m.target.name,
        "status": m.status,
        "measuredAt": when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z",
        # an endpoint is published as the URL printer shows it: a credential in it is never on record
        "launchCommand": urls.shown(m.target.url) if m.target.url else m.target.launch,
        **({"resolvedPackage": m.target.resolved.to_record()} if m.target.resolved is not None else {}),
        "envVarNames": list(m.target.env) + [name for name, _ in m.target.set_env if name not in m.target.env],
        **({"headerNames": list(m.target.headers)} if m.target.url else {}),
        "isolation": isolation,
        **({"shownHostPaths": sandbox.shown_host_paths(m.target.host_dirs, m.target.host_files)}
           if isolation.get("mode") == "sandbox" else {}),
        "timeoutMs": int((m.budget_seconds or m.target.timeout_seconds) * 1000),
        "deadlineMs": int(m.deadline_seconds * 1000) or 1,
        "harnessVersion": __version__,
    }


def _server_fields(capture: Capture, redactor: Secrets) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "serverName": redactor.text(capture.server_name),
        "serverVersion": redactor.text(capture.server_version),
        "serverInstructions": redactor.text(capture.instructions),
        "declaredToolsCapability": capture.declared_tools_capability,
        "requestedProtocolVersion": capture.requested_version,
        "phase": capture.phase,
    }
    if capture.negotiated_version is not None:
        fields["negotiatedProtocolVersion"] = capture.negotiated_version
    if capture.transport is not None:
        fields["transport"] = capture.transport
    if capture.initialized or capture.compatibility:
        fields["compatibility"] = compatibility.to_record(compatibility.findings(capture))
    return fields


def _numbers(m: Measurement, redactor: Secrets, notes: list[str]) -> dict:
    if m.status not in NUMBERED:
        return {"totalTokens": None, "toolCount": None, "canonicalSha256": None, "canonicalLength": None,
                "tools": [], "rawToolsCapture": None}
    tools, changed = redactor.json(m.capture.tools)
    if changed:
        notes.append("a declared secret value appeared in the tool list and was redacted before counting")
    counts = count_tools(tools).to_json()
    return {
        "totalTokens": counts["totalTokens"],
        "toolCount": counts["toolCount"],
        "canonicalSha256": counts["canonicalSha256"],
        "canonicalLength": counts["canonicalLength"],
        "tools": [_tool_entry(t) for t in counts["tools"]],
        "rawToolsCapture": tools,
    }


def _tool_entry(tool: dict) -> dict:
    """A per-tool diagnostic in the record's shape (a non-string ``name`` as its JSON text)."""
    entry = dict(tool)
    divergence = entry.pop("divergence", None)
    notes = [divergence] if divergence else []
    if not isinstance(entry["name"], str):
        notes.append(f"name is not a string in the capture: {stringify(entry['name'])[:200]}")
        entry["name"] = stringify(entry["name"])
    if notes:
        entry["note"] = "; ".join(notes)
    return entry


def _discover_figure(capture: Capture, redactor: Secrets) -> dict:
    tools, _ = redactor.json(capture.tools)
    counts = count_tools(tools).to_json()
    return {
        "protocolVersion": capture.negotiated_version or capture.requested_version,
        "supportedVersions": capture.extra_supported,
        "totalTokens": counts["totalTokens"],
        "toolCount": counts["toolCount"],
        "canonicalSha256": counts["canonicalSha256"],
        "rawToolsCapture": tools,
    }


def _attempt(capture: Capture, redactor: Secrets, info: AttemptInfo | None = None) -> dict:
    failure = capture.failure
    outcome = "listed" if capture.ok or failure is None else redactor.cut(f"{failure.kind}: {failure.detail}", 300)
    attempt = {
        "phase": capture.phase,
        "outcome": outcome,
        "elapsedSeconds": capture.elapsed_seconds,
        "exitCode": capture.exit_code,
        "canonicalSha256": _sha(capture) if capture.ok else None,
    }
    if info is not None:  # what the generated notes are made of (narrative)
        attempt |= {"role": info.role, "budgetMs": int(info.budget_seconds * 1000), "status": info.status,
                    "evidence": redactor.cut(info.evidence, 600) if info.evidence else None}
    return attempt


# --- what a record asserts ---------------------------------------------------------------------------

# Fields that say how and when a capture was taken, not what it is: a record is rewritten only when
# something outside them changes (harness.db.sweep). ``isolation`` keeps mode, os, arch and image.
CIRCUMSTANCES = ("measuredAt", "attempts", "deadlineMs", "timeoutMs", "harnessVersion")
_ISOLATION_ASSERTED = ("mode", "os", "arch", "image")


def _settle(record: dict[str, Any], measurement: Measurement) -> None:
    if record["status"] in NUMBERED:
        record["confirmed"] = bool(measurement.confirmed)
    launch = record["launchCommand"]  # a temp path the launch itself names is kept as it is
    for attempt in record["attempts"]:
        attempt["outcome"] = normalise(attempt["outcome"], launch)
        if attempt.get("evidence"):
            attempt["evidence"] = normalise(attempt["evidence"], launch)
    record["notes"] = [normalise(n, launch) for n in record["notes"]] + narrative(record["status"], record["attempts"])
    if record.get("stderrTail"):
        record["stderrTail"] = normalise(record["stderrTail"], launch)


def assertion(record: Mapping[str, Any]) -> dict[str, Any]:
    """What ``record`` asserts: all but ``CIRCUMSTANCES`` and the generated notes."""
    kept = {k: v for k, v in record.items() if k not in CIRCUMSTANCES}
    isolation = record.get("isolation")
    if isinstance(isolation, dict):
        kept["isolation"] = {k: isolation.get(k) for k in _ISOLATION_ASSERTED}
    generated = narrative(record.get("status"), record.get("attempts") or [])
    kept["notes"] = [n for n in record.get("notes") or [] if n not in generated]
    return kept


def _sha(capture: Capture) -> str:
    return hashlib.sha256(stringify(capture.tools).encode("utf-8")).hexdigest()


def serialize(record: Mapping[str, Any]) -> str:
    """The file text: ``JSON.stringify(record, null, 2)``, controls escaped, and a final newline."""
    return untrusted.json_text(stringify(record, indent=2)) + "\n"


def write(record: Record, results_dir: Path) -> Path:
    """Validate and atomically write ``results_dir/<server>/measurement.json``; return the path."""
    path = Path(results_dir) / record["server"] / published.RECORD_FILE
    schemas.check("measurement", record, where=str(path))
    return atomic.write_text(path, serialize(record))


# --- notes generated from the attempts ----------------------------------------------------------

def narrative(status: str | None, attempts: list[dict]) -> list[str]:
    """The notes on retries and the confirmation, generated from ``status`` and ``attempts`` alone."""
    main = [a for a in attempts if isinstance(a, dict) and a.get("role") in ("first", "retry")]
    confirming = [a for a in attempts if isinstance(a, dict) and a.get("role") == "confirmation"]
    if not main:
        return []
    if status in NUMBERED:
        return _captured(status, main, confirming)
    return _failed(status, main)


def _captured(status: str, main: list[dict], confirming: list[dict]) -> list[str]:
    notes = []
    if len(main) > 1:
        verb = "measured" if status == "measured" else "captured"
        before = "; then ".join(_ended(i, a) for i, a in enumerate(main[:-1], start=1))
        notes.append(f"{verb} on retry {len(main) - 1} ({_label(len(main), main[-1])}) after {before}")
    if confirming and confirming[0].get("status"):  # none made (--single): "confirmed": false says it
        second = confirming[0]
        notes.append(f"second launch failed ({second['status']}: {second.get('evidence') or 'no evidence'}); the "
                     "first launch's capture is published, unconfirmed")
    return notes


def _failed(status: str | None, main: list[dict]) -> list[str]:
    notes = []
    if len(main) > 1:
        statuses = [a.get("status") for a in main]
        if len(set(statuses)) == 1:
            budgets = ", ".join(_seconds(a) for a in main)
            notes.append(f"failed the same way on retry {len(main) - 1}: {status} on every attempt (budgets: {budgets})")
        else:
            steps = "; ".join(f"{_label(i, a)}: {a.get('status')}" for i, a in enumerate(main, start=1))
            notes.append(f"failed differently on retry {len(main) - 1}: {steps}; the published status is the last "
                         "attempt's")
    if status == "timeout":
        widest = max(_budget(a) for a in main)
        notes.append(f"widest budget tried: {widest:g} s")
    return notes


def _ended(index: int, attempt: dict) -> str:
    return f"{_label(index, attempt)} ended {attempt.get('status')}: {attempt.get('evidence') or 'no evidence'}"


def _label(index: int, attempt: dict) -> str:
    kind = "retry" if attempt.get("role") == "retry" else "attempt"
    return f"attempt {index}, {kind} at {_seconds(attempt)}" if kind == "retry" else f"attempt {index} at {_seconds(attempt)}"


def _budget(attempt: dict) -> float:
    value = attempt.get("budgetMs")
    return value / 1000 if isinstance(value, (int, float)) else 0.0


def _seconds(attempt: dict) -> str:
    return f"{_budget(attempt):g} s"


# --- volatile text in stored evidence ----------------------------------------------------------------

_RULES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}[:_]\d{2}[:_]\d{2}(?:[.,_]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"(?<![\d:])\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?![\d:])"), "<time>"),
    (re.compile(r"\((node|python\d?(?:\.\d+)?|bun|deno):\d+\)"), r"(\1:<pid>)"),
    (re.compile(r"\b(pid|PID|Pid|process id|process)(\s*[:=#]?\s*)\d+\b"), r"\1\2<pid>"),
    (re.compile(r"(?<![\w.])1[5-9]\d{8}(?:\d{3})?(?![\w.])"), "<epoch>"),
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?(ms|s)\b"), r"<n>\1"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "0x<addr>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{24,}\b"), "<hex>"),
)
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|" \
         r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_DATES = (
    re.compile(r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+)?(?:" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|"
               r"\d{1,2}\s+" + _MONTH + r"\b\.?)(?:,?\s+\d{4}\b)?"),
    re.compile(r"(?<![\d/])(?:\d{1,2}/\d{1,2}/\d{4}|\d{4}/\d{1,2}/\d{1,2})(?![\d/])"),
)
# Ephemeral ports only (32768-65535, where Linux and IANA hand them out): 6379, 8080, 53 are evidence.
_PORT = re.compile(r"(?<![\w.])((?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]*\])):"
                   r"(?:3[2-9]\d{3}|[45]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])\b")


_TEMP_PATH = re.compile(r"(?<![\w.-])(/(?:private/)?(?:tmp|var/tmp|var/folders/[^\s'\"/]+/[^\s'\"/]+/T))/"
                        r"([^\s'\"/:,;)\]]+)")


def normalise(text: str | None, keep: str = "") -> str | None:
    """``text`` with volatile fragments replaced by placeholders, keeping what ``keep`` names. Idempotent."""
    if not text:
        return text
    text = _TEMP_PATH.sub(lambda m: m.group(0) if m.group(0) in keep else f"{m.group(1)}/<tmp>", text)
    text = _PORT.sub(lambda m: m.group(0) if m.group(0) in keep else f"{m.group(1)}:<port>", text)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    for pattern in _DATES:
        text = pattern.sub("<date>", text)
    return text
