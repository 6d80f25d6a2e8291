"""Counting a tools array: the headline number, its canonical hash, and per-tool diagnostics.

Rule source: spec/methodology.txt, "What the number is" (totals) and "Session-start load"
(method deferred-load/v1); per-tool numbers follow shared/conformance/README.md.

Values are what ``harness.core.jsparse.parse`` returns (dict, list, str, float, bool, None).
Per-tool reads follow the JavaScript reference: property reads on a non-object yield
``undefined``, ``name ?? "(unnamed)"`` keeps ``0``/``false``/``""`` as they are, and a
description/inputSchema is counted only when JavaScript-truthy (missing, ``null``, ``""``,
``0``, ``-0``, ``NaN`` and ``false`` count 0; ``{}`` and ``[]`` are truthy and counted).

Deliberate divergences — per-tool numbers where the JavaScript reference throws instead of
producing any (totals are never affected; each such tool carries a ``divergence`` note):

* a truthy non-string ``description`` (e.g. ``7``): js-tiktoken throws ``text.substring is not a
  function``; here ``descriptionTokens`` = tokens of ``stringify(description)``;
* a ``null`` element: the reference throws reading ``name`` of null; here it is treated like any
  other primitive element: name ``"(unnamed)"``, 0/0, ``tokens`` = tokens of ``"null"``.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass

from harness.core.canonical import stringify
from harness.core.spans import count_many, count_spans
from harness.core.tokenizer import count

UNNAMED = "(unnamed)"
_MISSING = object()
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')  # what JSON.stringify rewrites


def js_truthy(value: object) -> bool:
    """JavaScript ToBoolean for parsed JSON values (``_MISSING`` stands for ``undefined``)."""
    if value is None or value is _MISSING or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, (int, float)):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True  # objects and arrays, empty or not


@dataclass(frozen=True)
class ToolCount:
    """Per-tool diagnostic (tokens; not summed into the total — tokens merge across seams).

    ``name`` is the tool's ``name`` value as parsed (usually ``str``; ``"(unnamed)"`` when missing
    or null; ``0``/``false`` kept as is). ``divergence`` is ``None`` unless the JavaScript
    reference has no number for this tool (see module docstring); then it says why.
    """

    name: object
    tokens: int
    descriptionTokens: int
    inputSchemaTokens: int
    divergence: str | None = None

    def to_json(self) -> dict:
        """``{name, tokens, descriptionTokens, inputSchemaTokens}`` (+ ``divergence`` if set)."""
        out = {"name": self.name, "tokens": self.tokens,
               "descriptionTokens": self.descriptionTokens,
               "inputSchemaTokens": self.inputSchemaTokens}
        if self.divergence is not None:
            out["divergence"] = self.divergence
        return out


@dataclass(frozen=True)
class ToolsCount:
    """The measurement of one tools array.

    ``totalTokens``: o200k_base tokens of the canonical string ``stringify(tools)``;
    ``canonicalSha256``: SHA-256 hex of its UTF-8 bytes; ``canonicalLength``: that byte count;
    ``toolCount``: ``len(tools)``; ``tools``: per-element :class:`ToolCount`, in order.
    """

    totalTokens: int
    canonicalSha256: str
    canonicalLength: int
    toolCount: int
    tools: tuple[ToolCount, ...]

    def to_json(self) -> dict:
        """Dict with exactly ``totalTokens, canonicalSha256, canonicalLength, toolCount, tools``."""
        return {"totalTokens": self.totalTokens, "canonicalSha256": self.canonicalSha256,
                "canonicalLength": self.canonicalLength, "toolCount": self.toolCount,
                "tools": [t.to_json() for t in self.tools]}


def _get(obj: object, key: str) -> object:
    return obj.get(key, _MISSING) if isinstance(obj, dict) else _MISSING


def _json_text(value: object) -> str:
    text = stringify(value)
    return "null" if text is None else text  # undefined inside an array serializes as null


def _tool_text(tool: object) -> tuple[str, dict[str, tuple[int, int]]]:
    """``(stringify(tool), {key: (start, end) of its value's text})``.

    For an object whose keys cannot be array indices (no key starts with a digit), the text is
    composed as SerializeJSONObject does — ``{`` + ``,``-joined ``"key":value`` + ``}`` in
    insertion order, skipping undefined — so each value is serialized once and its position is
    known. Otherwise (arrays indices reorder keys; non-objects) it is ``stringify(tool)`` and the
    position map is empty.
    """
    if not isinstance(tool, dict) or any(type(k) is not str or k[:1].isdigit() for k in tool):
        return _json_text(tool), {}
    pieces: list[str] = []
    where: dict[str, tuple[int, int]] = {}
    pos = 1
    for key, value in tool.items():
        text = stringify(value)
        if text is None:
            continue
        head = stringify(key) + ":"
        pos += (1 if pieces else 0) + len(head)
        where[key] = (pos, pos + len(text))
        pos += len(text)
        pieces.append(head + text)
    return "{" + ",".join(pieces) + "}", where


def _locate(part: str, where: dict, key: str, text: str, quoted: bool) -> int:
    """Offset of ``text`` inside ``part`` (the field's own position when known), or -1."""
    if key in where:
        s, e = where[key]
        if quoted:
            s, e = s + 1, e - 1
        if part[s:e] == text:
            return s
    return part.find(text)


def count_tools(tools: list) -> ToolsCount:
    """Count a parsed tools array (the concatenated ``tools`` of every tools/list page).

    The canonical string is ``"[" + ",".join(stringify(t) for t in tools) + "]"``, which is what
    ``JSON.stringify(tools)`` produces for an array (ECMA-262 SerializeJSONArray, no indent), so
    each element is serialized once. Every per-tool string that occurs verbatim in the canonical
    string (the tool, its schema, an escape-free description) is counted as a span of it with
    :func:`spans.count_spans` (exact; shares the tokenization); the rest directly.
    Raises ``TypeError`` if ``tools`` is not a list (or holds values stringify rejects) and
    :class:`harness.core.tokenizer.TokenizerUnavailable` when no tokenizer source works.
    """
    if not isinstance(tools, list):
        raise TypeError(f"tools must be a list, got {type(tools).__name__}")
    serialized = [_tool_text(tool) for tool in tools]
    canonical = "[" + ",".join(part for part, _ in serialized) + "]"
    spans: list[tuple[int, int]] = []
    direct: list[str] = []
    rows = []
    start = 1
    for tool, (part, where) in zip(tools, serialized):
        name = _get(tool, "name")
        name = UNNAMED if name is None or name is _MISSING else name
        desc, schema, note = _get(tool, "description"), _get(tool, "inputSchema"), None
        refs = [("span", len(spans))]
        spans.append((start, start + len(part)))
        for key, value in (("description", desc), ("inputSchema", schema)):
            if not js_truthy(value):
                refs.append(None)
                continue
            raw = key == "description" and isinstance(value, str)
            if raw:
                text = value  # counted as the string itself, not its JSON
            elif key in where:
                s, e = where[key]
                text = part[s:e]
            else:
                text = _json_text(value)
            if key == "description" and not raw:
                note = "description is not a string: the JS reference throws; counted as its JSON"
            # A description JSON.stringify escapes is not in the canonical text: count it alone.
            at = -1 if raw and _NEEDS_ESCAPE.search(text) else _locate(part, where, key, text, raw)
            if at >= 0:  # same characters, same count, wherever they sit
                refs.append(("span", len(spans)))
                spans.append((start + at, start + at + len(text)))
            else:
                refs.append(("direct", len(direct)))
                direct.append(text)
        if tool is None:
            note = "element is null: the JS reference throws; counted as a primitive"
        rows.append((name, refs, note))
        start += len(part) + 1
    total, span_counts = count_spans(canonical, spans)
    counts = {"span": span_counts, "direct": count_many(direct) if direct else []}

    def value(ref) -> int:
        return 0 if ref is None else counts[ref[0]][ref[1]]

    per_tool = tuple(ToolCount(name, value(tok), value(d), value(sch), note)
                     for name, (tok, d, sch), note in rows)
    encoded = canonical.encode("utf-8")
    return ToolsCount(total, hashlib.sha256(encoded).hexdigest(), len(encoded),
                      len(tools), per_tool)


@dataclass(frozen=True)
class SessionStartLoad:
    """Session-start load (deferred-load/v1), in tokens.

    ``namesTokens``: tokens of ``stringify([tool.name, …])``; ``instructionsTokens``: tokens of
    the server's instructions string, ``None`` when the server sent none (or it was not captured);
    ``totalTokens``: the sum of the two, ``None`` when instructions are missing — the names half
    alone is then a floor, published marked ≥, never as a figure.
    """

    namesTokens: int
    instructionsTokens: int | None
    totalTokens: int | None

    def to_json(self) -> dict:
        """``{namesTokens, instructionsTokens, totalTokens}`` (``None`` values kept as null)."""
        return {"namesTokens": self.namesTokens, "instructionsTokens": self.instructionsTokens,
                "totalTokens": self.totalTokens}


def session_start_load(tools: list, instructions: str | None) -> SessionStartLoad:
    """Count the session-start load of a server (spec "Session-start load", deferred-load/v1).

    Names half: ``JSON.stringify(tools.map(t => t.name))`` — a missing name (or a non-object
    element) is ``undefined`` and serializes as ``null``, as in JavaScript. Instructions half:
    the string counted as ordinary text. The halves are counted separately and summed (never
    tokenized joined). Raises ``TypeError`` if ``tools`` is not a list or ``instructions`` is
    neither ``str`` nor ``None``; :class:`TokenizerUnavailable` as :func:`count`.
    """
    if not isinstance(tools, list):
        raise TypeError(f"tools must be a list, got {type(tools).__name__}")
    if instructions is not None and not isinstance(instructions, str):
        raise TypeError(f"instructions must be str or None, got {type(instructions).__name__}")
    names = [None if (n := _get(t, "name")) is _MISSING else n for t in tools]
    names_tokens = count(_json_text(names))
    if instructions is None:
        return SessionStartLoad(names_tokens, None, None)
    instructions_tokens = count(instructions)
    return SessionStartLoad(names_tokens, instructions_tokens, names_tokens + instructions_tokens)
