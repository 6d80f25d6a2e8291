"""Counting many strings at once: ``count_spans`` shares one tokenization between a text and its
spans, ``count_many`` may use threads. Every count equals ``tokenizer.count`` of the same text.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import tiktoken

from harness.core.tokenizer import TokenizerUnavailable, Uncountable, get_encoding, length  # noqa: F401 - raised by both

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
