"""``results/<server>/tool-vectors.json``: a short, hash-deduplicated history of one server's
per-tool token vectors (methodology, "Cost movement", method cost-regression/v1; issue #13).

``measurement.json`` holds only the newest capture, so per-tool attribution of a movement needs the
older side from somewhere: every regen appends the vector of the server's current record when it is
``measured`` or ``dynamic`` and its ``(canonicalSha256, isolation)`` differs from the newest vector
on file (consecutive de-duplication: A → B → A keeps three vectors, so the newest vector is always
the current capture). Failures append nothing — they are gaps, never zeros.

A vector, as read (:class:`Vector`, a mapping)::

    {"date": "2026-11-30",              UTC day of the record's measuredAt
     "canonicalSha256": "…", "isolation": "sandbox" | "host" | "docker" | null (not on record),
     "status": "measured" | "dynamic", "totalTokens": 486, "toolCount": 2,
     "tools": [{"name": "…", "tokens": 1, "descriptionTokens": 1, "inputSchemaTokens": 1}, …]}

In the file each tool is the array ``[name, tokens, descriptionTokens, inputSchemaTokens]`` (a
third of the bytes of the object form, at up to 104 vectors per server).

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

Every vector is validated against the schema before it is written. Reading checks the same rules
by hand (the validator costs too much per vector at 100,000 vectors; the tests check the two agree)
and raises ``RecordError`` naming the file and line: a vector's scalar fields when the file is read,
its per-tool list when that is first used (a regen reads every vector but uses the tools of at most
two per server), so a damaged list is reported the first time anything depends on it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.core.canonical import stringify
from harness.core.counting import count_tools
from harness.db import confine
from harness.db.history import ISOLATIONS, NUMBERED
from harness.pages.records import RecordError
from harness.pages.text import as_int
from harness.util import bounded, schemas, untrusted

METHOD = "cost-regression/v1"
MAX_VECTORS = 104
FIELDS = ("date", "canonicalSha256", "isolation", "status", "totalTokens", "toolCount", "tools")
TOOL_FIELDS = ("name", "tokens", "descriptionTokens", "inputSchemaTokens")
_KEYS = frozenset(FIELDS)
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


class CaptureMismatch(RecordError):
    """A record's ``rawToolsCapture`` does not re-derive its published numbers: no vector."""


class Vector(Mapping):
    """One vector, read as the mapping above. The scalar fields are checked when the file is read;
    the per-tool list is parsed and checked on first use (attribution, reuse) — a regen reads
    every vector of every server but uses the tools of two per server at most. The vector's text
    is ``source[start:stop]`` (kept verbatim, never copied until needed); ``where`` names it in
    errors."""

    __slots__ = ("fields", "where", "_tools", "_source", "_start", "_stop", "_tools_at")

    def __init__(self, fields: dict, source: str, start: int, stop: int, where: str = "",
                 tools: list | None = None, tools_at: int | None = None):
        self.fields, self.where, self._tools = fields, where, tools
        self._source, self._start, self._stop, self._tools_at = source, start, stop, tools_at

    @classmethod
    def of(cls, vector: dict, on_file: dict | None = None) -> Vector:
        """A new vector from its dict (and its :func:`wire` form, when already made), serialized
        once, as ``JSON.stringify`` would, with the characters it leaves raw that a terminal acts on
        (C1, bidi controls: a tool name is a server's text) as ``\\uXXXX`` (``untrusted.json_text``)."""
        line = untrusted.json_text(stringify(on_file if on_file is not None else wire(vector)))
        return cls({k: vector[k] for k in FIELDS[:-1]}, line, 0, len(line), tools=vector["tools"])

    @property
    def line(self) -> str:
        """The vector's JSON text, one line."""
        return self._source[self._start:self._stop]

    @property
    def tools(self) -> list[dict]:
        if self._tools is None:
            try:
                tools = json.loads(self._source[self._tools_at:self._stop - 1])
            except ValueError as exc:
                raise RecordError([f"{self.where}: tools are not JSON: {exc}"]) from None
            problem = _tools_problem(tools)
            if problem:
                raise RecordError([f"{self.where}: {problem}"])
            self._tools = [dict(zip(TOOL_FIELDS, tool)) for tool in tools]
        return self._tools

    def __getitem__(self, name: str):
        return self.tools if name == "tools" else self.fields[name]

    def __iter__(self):
        return iter(FIELDS)

    def __len__(self) -> int:
        return len(FIELDS)

    def __repr__(self) -> str:
        return f"Vector({self.line[:120]!r}…)"


@dataclass(frozen=True)
class VectorHistory:
    """One server's vectors, oldest first; ``source`` is the file text they were read from while
    nothing has been appended (so an unchanged file is written back as the very same string)."""

    server: str
    vectors: tuple[Vector, ...] = ()
    source: str | None = field(default=None, compare=False, repr=False)

    @property
    def newest(self) -> Vector | None:
        return self.vectors[-1] if self.vectors else None

    def text(self) -> str:
        """The file text (only meaningful with at least one vector)."""
        return self.source if self.source is not None else file_text(self.server, [v.line for v in self.vectors])


def file_text(server: str, lines: list[str]) -> str:
    """The file holding vector ``lines`` (each one vector's JSON text, oldest first)."""
    header = json.dumps({"method": METHOD, "server": server, "bound": MAX_VECTORS}, separators=(",", ":"))
    return header[:-1] + ',"vectors":[\n' + ",\n".join(lines) + "\n]}\n"


def wire(vector: dict) -> dict:
    """``vector`` as the file holds it: each tool as ``[name, tokens, descriptionTokens,
    inputSchemaTokens]``."""
    return {**vector, "tools": [[t[k] for k in TOOL_FIELDS] for t in vector["tools"]]}


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
    rows = _rows(record)
    if newest is not None and key(newest) == record_key(record):
        # The newest vector on file stands for the current record: it must say what the record says
        # (whose rows were re-derived before publishing), or it was edited.
        said = (newest["totalTokens"], newest["toolCount"], newest["tools"])
        if rows is not None and said != (as_int(record.get("totalTokens")), as_int(record.get("toolCount")), rows):
            raise RecordError([f"{newest.where or where}: the newest vector does not match {where} (totalTokens, "
                               f"toolCount or a per-tool row differs from the record's own)"])
        return history
    # A vector on file is reused for the same capture only when its rows are the record's own.
    known = {v.fields["canonicalSha256"]: v for v in history.vectors if rows is None or v["tools"] == rows}
    vector = vector_of(record, where, known)
    on_file = wire(vector)
    document = {"method": METHOD, "server": history.server, "bound": MAX_VECTORS, "vectors": [on_file]}
    if not schemas.validator("tool-vectors").is_valid(document):  # the quick answer; the errors only if needed
        schemas.check("tool-vectors", document, where=where)
    return VectorHistory(history.server, (*history.vectors, Vector.of(vector, on_file))[-MAX_VECTORS:])


def _rows(record: dict) -> list[dict] | None:
    """The record's per-tool rows in a vector's shape (``None`` when it has none to compare)."""
    rows = record.get("tools")
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return None
    return [{f: (as_int(row.get(f)) if f != "name" else row.get(f)) for f in TOOL_FIELDS} for row in rows]


def read(path, server: str) -> VectorHistory:
    """The vectors on file at ``path`` (empty when the file does not exist). Raises
    :class:`RecordError` naming the file (and line) for anything not in the format above, or not a
    regular file of at most ``harness.util.bounded.MAX_RECORD_BYTES`` bytes; a
    vector's per-tool list is checked when it is first used (see :class:`Vector`)."""
    try:  # a regular file only, bounded: a FIFO or a device there would block or never end
        text = confine.read_bytes(confine.database_root(path), Path(path)).decode("utf-8")
    except FileNotFoundError:
        return VectorHistory(server)
    except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
        raise RecordError([f"{path}: cannot read: {exc}"]) from None
    header = file_text(server, []).split("\n", 1)[0] + "\n"
    if not text.startswith(header) or not text.endswith("\n]}\n") or len(text) <= len(header) + 4:
        raise RecordError([f"{path}: not a tool-vectors file of {server!r} in the one-vector-per-line format "
                           "(rebuild it with `mcp-context-cost regen --backfill`)"])
    vectors, errors = [], []
    start, end, number = len(header), len(text) - 4, 2  # the body: from after the header to before "\n]}\n"
    while start <= end:
        stop = text.find("\n", start, end)
        stop = end if stop < 0 else stop
        last = stop == end
        where = f"{path}:{number}"
        if not last and text[stop - 1] != ",":
            errors.append(f"{where}: a vector line must end with ','")
        else:
            vector = _vector(text, start, stop if last else stop - 1, where)
            if isinstance(vector, str):
                errors.append(f"{where}: {vector}")
            else:
                vectors.append(vector)
        start, number = stop + 1, number + 1
    if number - 2 > MAX_VECTORS:
        errors.append(f"{path}: {number - 2} vectors, more than the bound of {MAX_VECTORS}")
    if errors:
        raise RecordError(errors)
    return VectorHistory(server, tuple(vectors), text)


# The line as this module writes it: the scalars matched at its start, the tools (up to the final
# "}") left for later.
_HEAD = re.compile(r'\{"date":"(?P<date>\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))",'
                   r'"canonicalSha256":"(?P<sha>[0-9a-f]{64})",'
                   r'"isolation":(?:null|"(?P<iso>host|sandbox|docker)"),"status":"(?P<status>measured|dynamic)",'
                   r'"totalTokens":(?P<total>0|[1-9][0-9]{0,14}),"toolCount":(?P<count>0|[1-9][0-9]{0,14}),'
                   r'"tools":(?=\[)')


def _vector(text: str, start: int, stop: int, where: str) -> Vector | str:
    """The vector written at ``text[start:stop]``, or the problem with it."""
    match = _HEAD.match(text, start, stop)
    if match and text.startswith("]}", stop - 2, stop):
        date, sha, iso, status, total, count = match.groups()
        fields = {"date": date, "canonicalSha256": sha, "isolation": iso, "status": status,
                  "totalTokens": int(total), "toolCount": int(count)}
        return Vector(fields, text, start, stop, where, tools_at=match.end())
    try:  # written some other way (by hand, or reformatted): read it whole and check every rule now
        value = json.loads(text[start:stop])
    except ValueError as exc:
        return f"not JSON: {exc}"
    problem = _problem(value)
    if problem:
        return problem
    tools = [dict(zip(TOOL_FIELDS, t)) for t in value["tools"]]
    return Vector({k: value[k] for k in FIELDS[:-1]}, text, start, stop, where, tools=tools)


def _whole(value: object) -> bool:
    return type(value) is int and value >= 0


def _problem(vector: object) -> str | None:
    """Why ``vector`` breaks ``schemas/tool-vectors.schema.json`` (``$defs/vector``), or ``None``."""
    if not isinstance(vector, dict) or vector.keys() != _KEYS:
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
    return _tools_problem(vector["tools"])


def _tools_problem(tools: object) -> str | None:
    if not isinstance(tools, list):
        return "tools must be a list of per-tool vectors"
    for tool in tools:
        if type(tool) is not list or len(tool) != 4 or type(tool[0]) is not str \
                or not (_whole(tool[1]) and _whole(tool[2]) and _whole(tool[3])):
            return f"a per-tool vector is [{', '.join(TOOL_FIELDS)}]: a string and three whole numbers"
    return None


def at(history: VectorHistory, date: str, tokens: int | None, tool_count: int | None,
       isolation: str | None) -> Vector | None:
    """The vector in force on ``date``: the newest one (in file order) dated on or before it — and
    only when it carries the given totals (and ``isolation``, when that is on record); else
    ``None`` (the vectors do not reach back that far, or do not describe that measurement)."""
    for vector in reversed(history.vectors):
        if vector["date"] <= date:
            same = vector["totalTokens"] == tokens and vector["toolCount"] == tool_count
            return vector if same and (isolation is None or vector["isolation"] == isolation) else None
    return None
