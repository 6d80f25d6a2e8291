"""Per-tool token vectors (``results/<server>/tool-vectors.json``) and the capture index.

Public: :func:`read`, :func:`advance`, :func:`at`, :func:`build_capture_index`,
:func:`capture_index_text`. Rules: docs/PAGES.md, "Tool vectors and backfill"; docs/METHODOLOGY.md,
"Capture index".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.canonical import stringify
from harness.core.counting import count_tools
from harness.db import confine
from harness.core.record import NUMBERED
from harness.core.rederive import TOOL_FIELDS
from harness.db.history import ISOLATIONS
from harness.pages.published_records import RecordError
from harness.pages.regen_cache import Checks
from harness.pages.text import as_int
from harness.util import schemas, untrusted

METHOD = "cost-regression/v1"
MAX_VECTORS = 104
FIELDS = ("date", "canonicalSha256", "isolation", "status", "totalTokens", "toolCount", "tools")
_KEYS = frozenset(FIELDS)
# The schema's patterns as ECMA reads them: ASCII digits, and "\Z" (Python's "$" also passes a final "\n").
_DATE = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])\Z")
_SHA = re.compile(r"^[0-9a-f]{64}\Z")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*\Z")  # the schema's server pattern


class CaptureMismatch(RecordError):
    """A record's ``rawToolsCapture`` does not re-derive its published numbers: no vector."""


class Vector(Mapping):
    """One vector as a mapping: scalar fields checked when read, the tool list parsed and checked on
    first use; its text is ``source[start:stop]``, ``where`` names it in errors."""

    __slots__ = ("fields", "where", "_tools", "_source", "_start", "_stop", "_tools_at")

    def __init__(self, fields: dict, source: str, start: int, stop: int, where: str = "",
                 tools: list | None = None, tools_at: int | None = None):
        self.fields, self.where, self._tools = fields, where, tools
        self._source, self._start, self._stop, self._tools_at = source, start, stop, tools_at

    @classmethod
    def of(cls, vector: dict, on_file: dict | None = None) -> Vector:
        """A new vector from its dict (and its :func:`wire` form, when made), serialized once."""
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
    """One server's vectors, oldest first; ``source`` is their file text when known (the text they were read
    from, so an unchanged file is written back as the very same string). ``checks``: where :func:`read` found
    every line in the form it reads without parsing, the verdicts :func:`advance` adds the new text to."""

    server: str
    vectors: Sequence[Vector] = ()
    source: str | None = field(default=None, compare=False, repr=False)
    checks: Checks | None = field(default=None, compare=False, repr=False)

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


def key(vector_or_record_fields: Mapping[str, Any]) -> tuple:
    """What de-duplication compares: ``(canonicalSha256, isolation)``."""
    return vector_or_record_fields["canonicalSha256"], vector_or_record_fields["isolation"]


def record_key(record: Mapping[str, Any]) -> tuple:
    """``(canonicalSha256, isolation mode or None)`` of a parsed record."""
    iso = record.get("isolation")
    return record.get("canonicalSha256"), iso.get("mode") if isinstance(iso, dict) else None


def vector_of(record: Mapping[str, Any], where: str, known: Mapping[str, Mapping[str, Any]] | None = None) -> dict:
    """The vector of a ``measured``/``dynamic`` record, reusing the tool list of a ``known`` vector of
    the same capture and totals. Raises :class:`RecordError` (no date), :class:`CaptureMismatch`."""
    sha, isolation = record_key(record)
    day = str(record.get("measuredAt") or "")[:10]
    if not _DATE.match(day):
        raise RecordError([f"{where}: measuredAt {record.get('measuredAt')!r} has no YYYY-MM-DD date: no tool vector"])
    seen = (known or {}).get(sha)
    same = seen is not None and (seen["totalTokens"], seen["toolCount"]) == \
        (as_int(record.get("totalTokens")), as_int(record.get("toolCount")))
    tools = seen["tools"] if seen is not None and same else None
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


def advance(history: VectorHistory, record: Mapping[str, Any] | None, where: str,
            rederived: bool = False) -> VectorHistory:
    """``history`` with ``record``'s vector appended when it is a new capture, trimmed to
    :data:`MAX_VECTORS` (``rederived``: the record passed ``rederive.refusal``, so its own tool rows,
    totals and hash are its capture's and are not counted again). The new file text passes the history's
    ``checks`` when its new line is in the form :func:`read` takes (the next read of these bytes skips the
    check). Raises as :func:`vector_of`, and ``SchemaViolation``."""
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
    # Only vectors of the record's own capture can be reused: no other vector's tool list is read.
    sha = record_key(record)[0]
    known: dict[str, Mapping[str, Any]] = {sha: v for v in history.vectors
                                           if v.fields["canonicalSha256"] == sha and (rows is None or v["tools"] == rows)}
    if rederived and rows is not None and isinstance(sha, str) and "totalTokens" in record:
        known.setdefault(sha, {"totalTokens": as_int(record.get("totalTokens")),
                               "toolCount": as_int(record.get("toolCount")), "tools": rows})
    vector = vector_of(record, where, known)
    on_file = wire(vector)
    document: dict[str, Any] = {"method": METHOD, "server": history.server, "bound": MAX_VECTORS, "vectors": [on_file]}
    if not _plainly_valid(history.server, on_file) and not schemas.validator("tool-vectors").is_valid(document):
        schemas.check("tool-vectors", document, where=where)  # the errors, only when there are some
    vectors = (*history.vectors, Vector.of(vector, on_file))[-MAX_VECTORS:]
    if history.checks is None or not _LINE.fullmatch(vectors[-1].line):
        return VectorHistory(history.server, vectors)
    # Every older line passed read's check, the new one is in its form: so does the whole text.
    text = file_text(history.server, [v.line for v in vectors])
    history.checks.remember(history.server, text.encode("utf-8"))
    return VectorHistory(history.server, vectors, text, history.checks)


def _rows(record: Mapping[str, Any]) -> list[dict] | None:
    """The record's per-tool rows in a vector's shape (``None`` when it has none to compare)."""
    rows = record.get("tools")
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return None
    return [{f: (as_int(row.get(f)) if f != "name" else row.get(f)) for f in TOOL_FIELDS} for row in rows]


def read(path, server: str, checks: Checks | None = None) -> VectorHistory:
    """The vectors on file at ``path`` (empty when there is none). Raises :class:`RecordError` naming
    the file and line. ``checks``: a file whose exact bytes passed the line-by-line check before (under
    the same code) is not checked again, its vectors read when used (saved by the caller)."""
    try:  # a regular file only, bounded: a FIFO or a device there would block or never end
        data = confine.read_bytes(confine.database_root(path), Path(path))
        text = data.decode("utf-8")
    except FileNotFoundError:
        return VectorHistory(server, checks=checks)
    except (OSError, ValueError) as exc:  # ValueError: bounded.TooLarge, UnicodeDecodeError
        raise RecordError([f"{path}: cannot read: {exc}"]) from None
    header = file_text(server, []).split("\n", 1)[0] + "\n"
    if not text.startswith(header) or not text.endswith("\n]}\n") or len(text) <= len(header) + 4:
        raise RecordError([f"{path}: not a tool-vectors file of {server!r} in the one-vector-per-line format "
                           "(rebuild it with `mcp-context-cost regen --backfill`)"])
    if checks is not None and checks.passed(server, data):
        return VectorHistory(server, _Lines(text, len(header), len(text) - 4, str(path)), text, checks)
    plain = _plain(text, len(header), len(text) - 4, str(path))
    if plain is not None:
        if checks is not None:
            checks.remember(server, data)
        return VectorHistory(server, plain, text, checks)
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
_HEAD = re.compile(r'\{"date":"(?P<date>[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))",'
                   r'"canonicalSha256":"(?P<sha>[0-9a-f]{64})",'
                   r'"isolation":(?:null|"(?P<iso>host|sandbox|docker)"),"status":"(?P<status>measured|dynamic)",'
                   r'"totalTokens":(?P<total>0|[1-9][0-9]{0,14}),"toolCount":(?P<count>0|[1-9][0-9]{0,14}),'
                   r'"tools":(?=\[)')


_LINE = re.compile(_HEAD.pattern + r'[^\n]*\]\}')
_TOOLS_KEY = len(',"tools":')


def _plain(text: str, start: int, end: int, path: str) -> tuple[Vector, ...] | None:
    """The vectors of the body ``text[start:end]`` when every line is one this module writes (what the loop
    of :func:`read` would take, line by line); ``None`` otherwise, for that loop to say what is wrong."""
    vectors, number, match = [], 2, _LINE.match
    while True:
        found = match(text, start, end)
        if found is None:
            return None
        stop = found.end()
        vectors.append(_matched(found, text, start, f"{path}:{number}"))
        if stop == end:
            return tuple(vectors) if len(vectors) <= MAX_VECTORS else None
        if not text.startswith(",\n", stop):
            return None
        start, number = stop + 2, number + 1


def _matched(found: re.Match, text: str, start: int, where: str) -> Vector:
    """The vector of a :data:`_LINE` match starting at ``start``."""
    date, sha, iso, status, total, count = found.groups()
    fields = {"date": date, "canonicalSha256": sha, "isolation": iso, "status": status,
              "totalTokens": int(total), "toolCount": int(count)}
    return Vector(fields, text, start, found.end(), where, tools_at=found.end("count") + _TOOLS_KEY)


class _Lines(Sequence[Vector]):
    """The vectors of a file whose every line passed :func:`_plain` before (its exact bytes, ``Checks``),
    each read when first used, its line found from the end: a warm regen looks at the newest few of each file."""

    def __init__(self, text: str, start: int, end: int, path: str):
        self._text, self._path, self._start, self._end = text, path, start, end
        # a line ends at ",\n" (no line holds a raw newline: each is one JSON text)
        self._count = text.count(",\n", start, end) + 1
        self._breaks: list[int] = []  # where the lines break, the last first
        self._read: list[Vector | None] = [None] * self._count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Vector: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Vector]: ...

    def __getitem__(self, index: int | slice) -> Vector | Sequence[Vector]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._count)))
        vector = self._read[index]
        if vector is None:
            number = index % self._count
            after = self._count - 1 - number  # lines after this one
            while len(self._breaks) < min(after + 1, self._count - 1):
                self._breaks.append(self._text.rfind(",\n", self._start, self._breaks[-1] if self._breaks else self._end))
            start = self._breaks[after] + 2 if after < self._count - 1 else self._start
            stop = self._breaks[after - 1] if after else self._end
            found = _LINE.match(self._text, start, stop)
            where = f"{self._path}:{number + 2}"
            if found is None or found.end() != stop:  # not what passed: the verdict was not this file's
                raise RecordError([f"{where}: not a vector line as this harness writes it"])
            vector = self._read[index] = _matched(found, self._text, start, where)
        return vector

    def __iter__(self) -> Iterator[Vector]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # (as a tuple of vectors, which are mappings)


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


def _plainly_valid(server: str, on_file: dict) -> bool:
    """Whether the one-vector document of ``server`` holding ``on_file`` passes the tool-vectors schema by
    this module's own, stricter checks (``False``: the schema decides, as jsonschema is many times slower)."""
    return bool(_SLUG.match(server)) and _problem(on_file) is None and str(on_file["date"]).isascii()


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
    """The newest vector dated on or before ``date`` that carries the given totals (and isolation, when
    on record); ``None`` otherwise."""
    for vector in reversed(history.vectors):
        if vector["date"] <= date:
            same = vector["totalTokens"] == tokens and vector["toolCount"] == tool_count
            return vector if same and (isolation is None or vector["isolation"] == isolation) else None
    return None


CAPTURE_INDEX_METHOD = "capture-index/v1"


def _collect(vectors: dict[str, VectorHistory]) -> tuple[dict[str, dict[str, dict]], dict[str, dict]]:
    """``(sha → {server: first vector's scalar fields}, server → current entry)``, in first-seen order."""
    first: dict[str, dict[str, dict]] = {}
    current: dict[str, dict] = {}
    for server in sorted(vectors):
        history = vectors[server].vectors
        if not history:
            continue
        for vector in history:
            fields = vector.fields
            seen = first.get(fields["canonicalSha256"])
            if seen is None:
                first[fields["canonicalSha256"]] = {server: fields}
            elif server not in seen:
                seen[server] = fields
        newest = history[-1].fields
        since = newest["date"]
        for vector in reversed(history):
            if vector.fields["canonicalSha256"] != newest["canonicalSha256"]:
                break
            since = vector.fields["date"]
        current[server] = {"canonicalSha256": newest["canonicalSha256"], "date": since,
                           "totalTokens": newest["totalTokens"], "toolCount": newest["toolCount"]}
    return first, current


def _servers(by_server: dict[str, dict]) -> list[str]:
    return sorted(by_server) if len(by_server) > 1 else list(by_server)


def build_capture_index(vectors: dict[str, VectorHistory]) -> dict:
    """The index document for ``vectors`` (server name → its vectors)."""
    first, current = _collect(vectors)
    captures = {sha: [{"server": s, "date": by_server[s]["date"], "totalTokens": by_server[s]["totalTokens"],
                       "toolCount": by_server[s]["toolCount"]} for s in _servers(by_server)]
                for sha, by_server in first.items()}
    return {"method": CAPTURE_INDEX_METHOD, "captures": captures, "current": current}


def capture_index_text(vectors: dict[str, VectorHistory]) -> str:
    """:func:`build_capture_index`'s document as file text, one capture per line. Not validated here
    (too slow at 100,000 captures): the tests check it against its schema."""
    first, current = _collect(vectors)
    parts = []
    for sha, by_server in first.items():
        if len(by_server) == 1:  # most captures: one server, formatted in one step
            [(server, fields)] = by_server.items()
            parts.append(f'"{sha}":[{_capture_text(server, fields)}]')
        else:
            parts.append(f'"{sha}":[' + ",".join(_capture_text(s, by_server[s]) for s in _servers(by_server)) + "]")
    captures = ",\n".join(parts)
    now = ",\n".join(f'"{name}":{{"canonicalSha256":"{c["canonicalSha256"]}","date":"{c["date"]}",'
                      f'"totalTokens":{c["totalTokens"]},"toolCount":{c["toolCount"]}}}' for name, c in current.items())
    return f'{{"method":"{CAPTURE_INDEX_METHOD}",\n"captures":{{\n{captures}\n}},\n"current":{{\n{now}\n}}}}\n'


def _capture_text(server: str, fields: dict) -> str:
    """One server's entry under a capture in the index text."""
    return (f'{{"server":"{server}","date":"{fields["date"]}","totalTokens":{fields["totalTokens"]},'
            f'"toolCount":{fields["toolCount"]}}}')
