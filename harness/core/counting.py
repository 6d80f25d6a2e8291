"""Counting a tools array: ``count_tools`` (total, hash, per-tool rows) and ``session_start_load``.

Per-tool reads follow the JavaScript reference, including where it throws (docs/METHODOLOGY.md,
'What the number is', 'Session-start load', 'Known divergences').
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any

from harness.core.canonical import stringify
from harness.core.spans import count_many, count_spans
from harness.core.tokenizer import count

UNNAMED = "(unnamed)"
_MISSING = object()
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')  # what JSON.stringify rewrites


def js_truthy(value: object) -> bool:
    """JavaScript ToBoolean of a parsed JSON value (``_MISSING`` is ``undefined``)."""
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
    """One tool's diagnostic row; ``divergence`` says why the JavaScript reference has none."""

    name: object
    tokens: int
    descriptionTokens: int
    inputSchemaTokens: int
    divergence: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "tokens": self.tokens,
               "descriptionTokens": self.descriptionTokens,
               "inputSchemaTokens": self.inputSchemaTokens}
        if self.divergence is not None:
            out["divergence"] = self.divergence
        return out


@dataclass(frozen=True)
class ToolsCount:
    """The measurement of one tools array (field names as in the record)."""

    totalTokens: int
    canonicalSha256: str
    canonicalLength: int
    toolCount: int
    tools: tuple[ToolCount, ...]

    def to_json(self) -> dict[str, Any]:
        return {"totalTokens": self.totalTokens, "canonicalSha256": self.canonicalSha256,
                "canonicalLength": self.canonicalLength, "toolCount": self.toolCount,
                "tools": [t.to_json() for t in self.tools]}


def _get(obj: object, key: str) -> object:
    return obj.get(key, _MISSING) if isinstance(obj, dict) else _MISSING


def _json_text(value: object) -> str:
    text = stringify(value)
    return "null" if text is None else text  # undefined inside an array serializes as null


def _tool_text(tool: object) -> tuple[str, dict[str, tuple[int, int]]]:
    """``(stringify(tool), {key: (start, end) of its value's text})``; the map is empty for
    non-objects and objects whose keys may be array indices.
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


def _locate(part: str, where: dict[str, tuple[int, int]], key: str, text: str, quoted: bool) -> int:
    """Offset of ``text`` inside ``part`` (the field's own position when known), or -1."""
    if key in where:
        s, e = where[key]
        if quoted:
            s, e = s + 1, e - 1
        if part[s:e] == text:
            return s
    return part.find(text)


def count_tools(tools: list[Any]) -> ToolsCount:
    """Count a parsed tools array (every tools/list page's ``tools`` concatenated).

    Per-tool strings found verbatim in the canonical text are counted as spans of it (exact).
    TypeError for a non-list or a value stringify rejects; TokenizerUnavailable.
    """
    if not isinstance(tools, list):
        raise TypeError(f"tools must be a list, got {type(tools).__name__}")
    serialized = [_tool_text(tool) for tool in tools]
    canonical = "[" + ",".join(part for part, _ in serialized) + "]"
    spans: list[tuple[int, int]] = []
    direct: list[str] = []
    Ref = tuple[str, int] | None  # ("span" | "direct", index), or None for a field counted 0
    rows: list[tuple[object, list[Ref], str | None]] = []
    start = 1
    for tool, (part, where) in zip(tools, serialized):
        name = _get(tool, "name")
        name = UNNAMED if name is None or name is _MISSING else name
        desc, schema, note = _get(tool, "description"), _get(tool, "inputSchema"), None
        refs: list[Ref] = [("span", len(spans))]
        spans.append((start, start + len(part)))
        for key, value in (("description", desc), ("inputSchema", schema)):
            if not js_truthy(value):
                refs.append(None)
                continue
            raw = key == "description" and isinstance(value, str)
            if isinstance(value, str) and raw:
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

    def tokens(ref: Ref) -> int:
        return 0 if ref is None else counts[ref[0]][ref[1]]

    per_tool = tuple(ToolCount(name, tokens(tok), tokens(d), tokens(sch), note)
                     for name, (tok, d, sch), note in rows)
    encoded = canonical.encode("utf-8")
    return ToolsCount(total, hashlib.sha256(encoded).hexdigest(), len(encoded),
                      len(tools), per_tool)


@dataclass(frozen=True)
class SessionStartLoad:
    """Session-start load in tokens; ``totalTokens`` is ``None`` when the instructions are unknown."""

    namesTokens: int
    instructionsTokens: int | None
    totalTokens: int | None

    def to_json(self) -> dict[str, Any]:
        return {"namesTokens": self.namesTokens, "instructionsTokens": self.instructionsTokens,
                "totalTokens": self.totalTokens}


def session_start_load(tools: list[Any], instructions: str | None) -> SessionStartLoad:
    """Tokens of ``JSON.stringify(tools.map(t => t.name))`` and of ``instructions``, counted apart.

    TypeError for a non-list ``tools`` or non-str ``instructions``.
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
