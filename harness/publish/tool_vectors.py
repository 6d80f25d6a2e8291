"""``results/<server>/tool-vectors.json``: a short, hash-deduplicated history of one server's
per-tool token vectors (methodology, "Cost movement", method cost-regression/v1; issue #13).

``measurement.json`` holds only the newest capture, so per-tool attribution of a movement needs the
older side from somewhere: every regen appends the vector of the server's current record when it is
``measured`` or ``dynamic`` and its ``(canonicalSha256, isolation)`` differs from the newest vector
on file (consecutive de-duplication: A → B → A keeps three vectors, so the newest vector is always
the current capture). Failures append nothing — they are gaps, never zeros.

A vector::

    {"date": "2026-11-30",              UTC day of the record's measuredAt
     "canonicalSha256": "…", "isolation": "sandbox" | "host" | "docker" | null (not on record),
     "status": "measured" | "dynamic", "totalTokens": 486, "toolCount": 2,
     "tools": [{"name": "…", "tokens": 1, "descriptionTokens": 1, "inputSchemaTokens": 1}, …]}

Per-tool numbers are ``harness.core.counting.count_tools`` of the record's own ``rawToolsCapture``
(a non-string name is kept as its JSON text, as the record does); the capture must re-derive the
record's ``canonicalSha256`` and ``totalTokens``, else :class:`CaptureMismatch`.

Bound: at most :data:`MAX_VECTORS` (104 — two years of a server that changes every weekly sweep)
vectors per server; appending past it drops the oldest. Older changes then read "breakdown
unavailable", and their captures "unidentified" in the capture index — an absence of a record, not a
claim.

File format (``schemas/tool-vectors.schema.json``): a JSON object written one vector per line, so an
append adds one line and unchanged vectors are never re-serialized::

    {"method":"cost-regression/v1","server":"<name>","bound":104,"vectors":[
    {…oldest…},
    {…newest…}
    ]}

Every vector is validated against the schema before it is written; reading checks the same rules
by hand (the validator costs too much per vector at 100,000 vectors; the tests check the two agree)
and raises ``RecordError`` naming the file and line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from harness.core.canonical import stringify
from harness.core.counting import count_tools
from harness.db.history import ISOLATIONS, NUMBERED
from harness.publish.records import RecordError
from harness.publish.text import as_int
from harness.util import schemas

METHOD = "cost-regression/v1"
MAX_VECTORS = 104
FIELDS = ("date", "canonicalSha256", "isolation", "status", "totalTokens", "toolCount", "tools")
TOOL_FIELDS = ("name", "tokens", "descriptionTokens", "inputSchemaTokens")
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


class CaptureMismatch(RecordError):
    """A record's ``rawToolsCapture`` does not re-derive its published numbers: no vector."""


@dataclass(frozen=True)
class VectorHistory:
    """One server's vectors, oldest first, with each vector's line of file text (kept verbatim so
    an unchanged vector is never serialized again)."""

    server: str
    vectors: tuple[dict, ...] = ()
    lines: tuple[str, ...] = ()

    @property
    def newest(self) -> dict | None:
        return self.vectors[-1] if self.vectors else None

    def text(self) -> str:
        """The file text (only meaningful with at least one vector)."""
        body = ",\n".join(self.lines)
        return f"{_header(self.server)}\n{body}\n]}}\n"


def _header(server: str) -> str:
    return json.dumps({"method": METHOD, "server": server, "bound": MAX_VECTORS}, separators=(",", ":"))[:-1] \
        + ',"vectors":['


def key(vector_or_record_fields: dict) -> tuple:
    """What de-duplication compares: ``(canonicalSha256, isolation)``."""
    return vector_or_record_fields["canonicalSha256"], vector_or_record_fields["isolation"]


def record_key(record: dict) -> tuple:
    """``(canonicalSha256, isolation mode or None)`` of a parsed record."""
    iso = record.get("isolation")
    return record.get("canonicalSha256"), iso.get("mode") if isinstance(iso, dict) else None


def vector_of(record: dict, where: str, known: dict[str, dict] | None = None) -> dict:
    """The vector of a ``measured``/``dynamic`` record. ``known`` maps a canonicalSha256 already
    counted to its vector: same bytes, same counts, so its per-tool list is reused instead of
    re-tokenized (when the totals agree too).

    Raises :class:`RecordError` for a record without a usable date, :class:`CaptureMismatch` when
    the capture does not re-derive the record's canonicalSha256 and totalTokens."""
    sha, isolation = record_key(record)
    day = str(record.get("measuredAt") or "")[:10]
    if not _DATE.match(day):
        raise RecordError([f"{where}: measuredAt {record.get('measuredAt')!r} has no YYYY-MM-DD date: no tool vector"])
    seen = (known or {}).get(sha)
    same = seen is not None and (seen["totalTokens"], seen["toolCount"]) == \
        (as_int(record.get("totalTokens")), as_int(record.get("toolCount")))
    tools = seen["tools"] if same else None
    if tools is None:
        counts = count_tools(record["rawToolsCapture"])
        if counts.canonicalSha256 != sha or counts.totalTokens != as_int(record.get("totalTokens")):
            raise CaptureMismatch([f"{where}: rawToolsCapture re-derives canonicalSha256 {counts.canonicalSha256[:12]}… "
                                   f"and {counts.totalTokens} tokens, the record says {str(sha)[:12]}… and "
                                   f"{as_int(record.get('totalTokens'))}: no tool vector"])
        tools = [{"name": t.name if isinstance(t.name, str) else stringify(t.name), "tokens": t.tokens,
                  "descriptionTokens": t.descriptionTokens, "inputSchemaTokens": t.inputSchemaTokens}
                 for t in counts.tools]
    return {"date": day, "canonicalSha256": sha, "isolation": isolation if isolation in ISOLATIONS else None,
            "status": record["status"], "totalTokens": as_int(record["totalTokens"]),
            "toolCount": as_int(record["toolCount"]), "tools": tools}


def advance(history: VectorHistory, record: dict | None, where: str) -> VectorHistory:
    """``history`` after a sweep published ``record``: one vector appended when the record is
    ``measured``/``dynamic`` and its ``(canonicalSha256, isolation)`` differs from the newest
    vector's; unchanged otherwise. Trims to :data:`MAX_VECTORS`. Raises as :func:`vector_of`, and
    ``SchemaViolation`` for a vector the schema rejects."""
    if record is None or record.get("status") not in NUMBERED:
        return history
    newest = history.newest
    if newest is not None and key(newest) == record_key(record):
        return history
    known = {v["canonicalSha256"]: v for v in history.vectors}
    vector = vector_of(record, where, known)
    schemas.check("tool-vectors", {"method": METHOD, "server": history.server, "bound": MAX_VECTORS,
                                   "vectors": [vector]}, where=where)
    vectors = (*history.vectors, vector)[-MAX_VECTORS:]
    lines = (*history.lines, stringify(vector))[-MAX_VECTORS:]
    return VectorHistory(history.server, vectors, lines)


def read(path, server: str) -> VectorHistory:
    """The vectors on file at ``path`` (empty when the file does not exist). Raises
    :class:`RecordError` naming the file (and line) for anything not in the format above."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return VectorHistory(server)
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError([f"{path}: cannot read: {exc}"]) from None
    rows = text.split("\n")
    if len(rows) < 4 or rows[0] != _header(server) or rows[-2:] != ["]}", ""]:
        raise RecordError([f"{path}: not a tool-vectors file of {server!r} in the one-vector-per-line format "
                           "(rebuild it with `mcp-context-cost regen --backfill`)"])
    body = rows[1:-2]
    vectors, lines, errors = [], [], []
    for index, row in enumerate(body):
        last = index == len(body) - 1
        line = row if last else row[:-1]
        problem = None if last or row.endswith(",") else "a vector line must end with ','"
        try:
            vector = json.loads(line)
        except ValueError as exc:
            vector, problem = None, problem or f"not JSON: {exc}"
        problem = problem or _problem(vector)
        if problem:
            errors.append(f"{path}:{index + 2}: {problem}")
        else:
            vectors.append(vector)
            lines.append(line)
    if len(body) > MAX_VECTORS:
        errors.append(f"{path}: {len(body)} vectors, more than the bound of {MAX_VECTORS}")
    if errors:
        raise RecordError(errors)
    return VectorHistory(server, tuple(vectors), tuple(lines))


def _whole(value: object) -> bool:
    return type(value) is int and value >= 0


def _problem(vector: object) -> str | None:
    """Why ``vector`` breaks ``schemas/tool-vectors.schema.json`` (``$defs/vector``), or ``None``."""
    if not isinstance(vector, dict) or tuple(sorted(vector)) != tuple(sorted(FIELDS)):
        return f"a vector is an object with exactly {', '.join(FIELDS)}"
    if not isinstance(vector["date"], str) or not _DATE.match(vector["date"]):
        return "date must be YYYY-MM-DD"
    if not isinstance(vector["canonicalSha256"], str) or not _SHA.match(vector["canonicalSha256"]):
        return "canonicalSha256 must be 64 lower-case hex digits"
    if vector["isolation"] is not None and vector["isolation"] not in ISOLATIONS:
        return "isolation must be host, sandbox, docker or null"
    if vector["status"] not in NUMBERED:
        return "status must be measured or dynamic"
    if not (_whole(vector["totalTokens"]) and _whole(vector["toolCount"])):
        return "totalTokens and toolCount must be whole numbers"
    tools = vector["tools"]
    if not isinstance(tools, list):
        return "tools must be a list of per-tool vectors"
    for tool in tools:
        if not isinstance(tool, dict) or tuple(sorted(tool)) != tuple(sorted(TOOL_FIELDS)) \
                or not isinstance(tool["name"], str) or not all(_whole(tool[k]) for k in TOOL_FIELDS[1:]):
            return f"a per-tool vector is {{{', '.join(TOOL_FIELDS)}}}: a string and three whole numbers"
    return None


def at(history: VectorHistory, date: str, tokens: int | None, tool_count: int | None,
       isolation: str | None) -> dict | None:
    """The vector in force on ``date``: the newest one (in file order) dated on or before it — and
    only when it carries the given totals (and ``isolation``, when that is on record); else
    ``None`` (the vectors do not reach back that far, or do not describe that measurement)."""
    for vector in reversed(history.vectors):
        if vector["date"] <= date:
            same = vector["totalTokens"] == tokens and vector["toolCount"] == tool_count
            return vector if same and (isolation is None or vector["isolation"] == isolation) else None
    return None
