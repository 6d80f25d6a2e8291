"""Where a server's tokens go: the headline split per tool and per field, parts summing exactly to it.

Public: :func:`of_record`, :func:`compose`, :class:`Composition`. Rule: docs/PAGES.md, "Dashboard,
calculator, server pages".
"""

from __future__ import annotations

import bisect
import functools
import itertools
from dataclasses import dataclass
from collections.abc import Callable, Mapping
from typing import Any

from harness.core.canonical import stringify
from harness.core.tokenizer import get_encoding
from harness.pages.text import as_int, one_line

FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations", "other")
LABELS = {"name": "name", "description": "description", "inputSchema": "input schema",
          "outputSchema": "output schema", "annotations": "annotations", "other": "other fields"}
_OTHER = FIELDS.index("other")


@dataclass(frozen=True)
class ToolParts:
    name: str  # one line
    parts: tuple[int, ...]  # tokens per FIELDS, in that order

    @property
    def tokens(self) -> int:
        return sum(self.parts)

    def part(self, field: str) -> int:
        return self.parts[FIELDS.index(field)]


@dataclass(frozen=True)
class Composition:
    tools: tuple[ToolParts, ...]  # in server order
    punctuation: int  # the array's own brackets and commas
    total: int

    def field_totals(self) -> dict[str, int]:
        """Tokens per field over every tool (``punctuation`` not included)."""
        return {f: sum(t.parts[i] for t in self.tools) for i, f in enumerate(FIELDS)}


def _tool_pieces(tool: object) -> tuple[str, list[tuple[int, int]]]:
    """``(stringify(tool), [(UTF-8 offset, field index), …])``: where each field's ``"key":value`` starts."""
    if not isinstance(tool, dict) or any(type(k) is not str or k[:1].isdigit() for k in tool):
        text = stringify(tool)
        return ("null" if text is None else text), [(0, _OTHER)]
    pieces: list[str] = []
    marks = [(0, _OTHER)]  # the opening brace
    pos = 1
    for key, value in tool.items():
        text = stringify(value)
        if text is None:
            continue
        if pieces:
            marks.append((pos, _OTHER))  # the comma
            pos += 1
        marks.append((pos, FIELDS.index(key) if key in FIELDS else _OTHER))
        piece = stringify(key) + ":" + text
        pieces.append(piece)
        pos += len(piece.encode("utf-8"))
    marks.append((pos, _OTHER))  # the closing brace
    return "{" + ",".join(pieces) + "}", marks


def compose(capture: object, total: object = None) -> Composition | None:
    """The composition of a parsed ``rawToolsCapture``; ``None`` when it is not a list or its token
    count differs from ``total`` (when given)."""
    if not isinstance(capture, list):
        return None
    starts: list[int] = []  # UTF-8 byte offset in the canonical string where a slot begins
    slots: list[tuple[int, int]] = []  # (tool index or -1 for punctuation, field index)
    texts: list[str] = []
    pos = 1
    starts.append(0)
    slots.append((-1, 0))
    for i, tool in enumerate(capture):
        if i:
            starts.append(pos)
            slots.append((-1, 0))
            pos += 1
        text, marks = _tool_pieces(tool)
        for offset, field in marks:
            starts.append(pos + offset)
            slots.append((i, field))
        texts.append(text)
        pos += len(text.encode("utf-8"))
    starts.append(pos)
    slots.append((-1, 0))
    canonical = "[" + ",".join(texts) + "]"
    enc = get_encoding()
    try:
        tokens = enc.encode_ordinary(canonical)
    except BaseException as exc:  # noqa: BLE001 - a Rust panic (a long blank run): no chart, never a crash
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None
    want = as_int(total) if total is not None else None
    if want is not None and len(tokens) != want:
        return None
    parts = [[0] * len(FIELDS) for _ in capture]
    punctuation = 0
    offsets = list(itertools.accumulate(map(_size_of(enc), tokens), initial=0))[:-1]  # where each token starts
    # a slot's tokens are those starting inside it: [starts[j], starts[j + 1]), the last slot open-ended
    below = [bisect.bisect_left(offsets, start) for start in starts] + [len(offsets)]
    for (tool, field), lo, hi in zip(slots, below, below[1:]):
        if tool < 0:
            punctuation += hi - lo
        else:
            parts[tool][field] += hi - lo
    tools = tuple(ToolParts(_name(t), tuple(p)) for t, p in zip(capture, parts))
    return Composition(tools, punctuation, len(tokens))


@functools.lru_cache(maxsize=4)
def _size_of(enc) -> Callable[[int], int]:
    """Each token's length in UTF-8 bytes under ``enc``, remembered per token id (tokens repeat across captures)."""
    return _Sizes(enc).__getitem__  # a found size costs a dict lookup in C, no Python call


class _Sizes(dict):
    """``{token id: its length in UTF-8 bytes}``, filled as tokens are asked for."""

    def __init__(self, enc) -> None:
        super().__init__()
        self._enc = enc

    def __missing__(self, token: int) -> int:
        size = self[token] = len(self._enc.decode_single_token_bytes(token))
        return size


def _name(tool: object) -> str:
    name = tool.get("name") if isinstance(tool, dict) else None
    return one_line(name if isinstance(name, str) else stringify(name) or "(unnamed)", 200)


def of_record(record: Mapping[str, Any] | None) -> Composition | None:
    """The composition of a published record's capture, checked against its ``totalTokens``."""
    if not record or as_int(record.get("totalTokens")) is None:
        return None
    return compose(record.get("rawToolsCapture"), record.get("totalTokens"))
