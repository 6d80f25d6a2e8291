"""Counting a tools array: ``count_tools`` (total, hash, per-tool rows) and ``session_start_load``;
``count_spans`` and ``count_many`` count many strings at once, each exactly as ``tokenizer.count``.

Per-tool reads follow the JavaScript reference, including where it throws (docs/METHODOLOGY.md,
'What the number is', 'Session-start load', 'Known divergences').
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import tiktoken

from harness.core.canonical import stringify
from harness.core.tokenizer import count, get_encoding, length

THREADS_ENV = "MCP_CONTEXT_COST_THREADS"
PARALLEL_MIN_CHARS = 32_768
_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _pool_size() -> int:
    """Threads for ``count_many``: ``$MCP_CONTEXT_COST_THREADS``, default 1."""
    raw = os.environ.get(THREADS_ENV, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None or _pool._max_workers < workers:  # noqa: SLF001 - sizing only
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="o200k")
        return _pool


def count_many(texts: Sequence[str]) -> list[int]:
    """``[count(t) for t in texts]``, on several threads when opted in and worthwhile."""
    enc = get_encoding()
    workers = min(_pool_size(), len(texts))
    if workers < 2 or sum(map(len, texts)) < PARALLEL_MIN_CHARS:
        return [length(enc, t) for t in texts]
    bins: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for i in sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True):
        j = loads.index(min(loads))
        bins[j].append(i)
        loads[j] += len(texts[i])

    def run(indices: list[int]) -> list[tuple[int, int]]:
        return [(i, length(enc, texts[i])) for i in indices]

    pool = _executor(workers - 1)
    futures = [pool.submit(run, b) for b in bins[1:]]
    out = [0] * len(texts)
    for i, n in run(bins[0]):
        out[i] = n
    for fut in futures:
        for i, n in fut.result():
            out[i] = n
    return out


# A position h with text[h-1] an ASCII letter/digit and text[h] one of  " , : } ]  ("hard boundary").
_HARD = re.compile(r'[A-Za-z0-9](?=[",:}\]])')
_HARD_REV = re.compile(r'[",:}\]](?=[A-Za-z0-9])')  # the same pairs, in reversed text


_O200K_PAT = (  # the pre-tokenizer pattern the count_spans argument is about (tiktoken_ext 0.14)
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
    r"""\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


def _splittable(enc: tiktoken.Encoding) -> bool:
    """True when ``enc`` uses the pre-tokenizer pattern the hard-boundary argument is about."""
    return getattr(enc, "_pat_str", None) == _O200K_PAT


# Why count_spans is exact. tiktoken counts a string as the sum of the BPE lengths of the pieces its
# pre-tokenizer cuts. Call h a hard boundary when text[h-1] is an ASCII letter/digit and text[h] one of
# " , : } ]. No alternative of the o200k pattern matches across such a pair, and none looks past it (the
# only lookaround is (?!\S) after whitespace), so every hard boundary is a piece boundary in any string
# holding the pair: a string's count is the sum of its parts' counts cut there. Each span is cut at its
# first and last inner hard boundary; the middle is shared segments of text, the two ends are counted
# alone. Checked against direct counting by property tests (tests/core/test_tokenizer.py).
def count_spans(text: str, spans: Sequence[tuple[int, int]]) -> tuple[int, list[int]]:
    """``(count(text), [count(text[s:t]) for s, t in spans])``, exact, sharing the work.

    ValueError for a span outside ``text``; TokenizerUnavailable.
    """
    enc = get_encoding()
    for s, t in spans:
        if not 0 <= s <= t <= len(text):
            raise ValueError(f"span ({s}, {t}) is not inside a text of length {len(text)}")
    if not _splittable(enc):
        counts = count_many([text, *(text[s:t] for s, t in spans)])
        return counts[0], counts[1:]
    cuts: set[int] = set()
    inner: list[tuple[int, int] | None] = []
    size = len(text)
    rev = text[::-1] if spans else ""  # the last boundary of a span is the first one in reverse
    for s, t in spans:
        first = _HARD.search(text, s, t)
        last = _HARD_REV.search(rev, size - t, size - s)
        if first is None or last is None:  # the same pairs read both ways: both found or neither
            inner.append(None)
            continue
        h1, h2 = first.end(), size - 1 - last.start()
        inner.append((h1, h2))
        cuts.update((h1, h2))
    bounds = [0, *sorted(cuts), len(text)]
    at = {pos: k for k, pos in enumerate(bounds)}
    texts = [text[bounds[k]:bounds[k + 1]] for k in range(len(bounds) - 1)]
    nseg = len(texts)
    slot: dict[str, int] = {}
    ends: list[tuple[int, int]] = []  # slots of the span's two ends (the same slot when uncut)
    for (s, t), cut in zip(spans, inner):
        pieces = [text[s:t]] if cut is None else [text[s:cut[0]], text[cut[1]:t]]
        idx = [slot.setdefault(p, nseg + len(slot)) for p in pieces]
        ends.append((idx[0], idx[-1]))
    texts.extend(slot)  # dict keeps insertion order == assigned slot numbers
    counts = count_many(texts)
    prefix = [0]
    for n in counts[:nseg]:
        prefix.append(prefix[-1] + n)
    out = []
    for cut, end in zip(inner, ends):
        if cut is None:
            out.append(counts[end[0]])
        else:
            out.append(counts[end[0]] + prefix[at[cut[1]]] - prefix[at[cut[0]]] + counts[end[1]])
    return prefix[-1], out


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
