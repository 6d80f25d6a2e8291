"""Counting many strings at once: the per-tool diagnostics share one tokenization of the
canonical string (``count_spans``), and independent texts may be counted on threads
(``count_many``). Every count equals ``harness.core.tokenizer.count`` of the same text; the
argument for ``count_spans`` being exact is in its docstring and is checked by property tests
against direct counting (tests/core/test_tokenizer.py).
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
    """Threads for count_many: ``$MCP_CONTEXT_COST_THREADS`` (default 1, i.e. none). Opt-in: on
    the 2-vCPU machine this was written on, per-segment GIL hand-offs cost more CPU than the
    overlap saved; on an idle many-core machine it can lower wall time."""
    raw = os.environ.get(THREADS_ENV, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None or _pool._max_workers < workers:  # noqa: SLF001 - sizing only
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="o200k")
        return _pool


def count_many(texts: Sequence[str]) -> list[int]:
    """``[count(t) for t in texts]`` (tokens), computed on several threads when worthwhile.

    tiktoken releases the GIL while encoding, so with ``$MCP_CONTEXT_COST_THREADS`` above 1,
    texts totalling at least ``PARALLEL_MIN_CHARS`` are split into balanced bins (longest first)
    counted concurrently; each count is the same ``tokenizer.length`` call as :func:`count`, so
    results never depend on the split. Raises :class:`TokenizerUnavailable`, :class:`Uncountable`.
    """
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
    """True when ``enc`` cuts pieces with exactly the pattern count_spans' argument is about."""
    return getattr(enc, "_pat_str", None) == _O200K_PAT


def count_spans(text: str, spans: Sequence[tuple[int, int]]) -> tuple[int, list[int]]:
    """``(count(text), [count(text[s:t]) for (s, t) in spans])`` in tokens, sharing the work.

    Exact, not an estimate. tiktoken counts a string as the sum, over the pieces its
    pre-tokenizer regex cuts, of each piece's BPE length. Call ``h`` a *hard boundary* when
    ``text[h-1]`` is an ASCII letter or digit and ``text[h]`` is one of ``" , : } ]``. No
    alternative of the o200k pattern matches a string containing such a pair (letter pieces hold
    letters/marks plus an optional leading non-letter and a ``'s``-style suffix; digit pieces hold
    digits; the punctuation piece excludes letters and digits; the rest is whitespace), and no
    alternative decides anything by looking past ``text[h]`` from before ``h`` or behind ``h``
    (the only lookaround is ``(?!\\S)`` after whitespace). So every hard boundary is a piece
    boundary in every string containing the pair, and the pieces between two of them do not
    depend on anything outside: **the count of a string equals the sum of the counts of its parts
    cut at hard boundaries.** Each span is cut at its first and last inner hard boundary; the
    middle is a run of shared segments of ``text``, the two ends are counted on their own, and
    ``text`` itself is the sum of all segments. A span without an inner hard boundary, or an
    encoding whose pattern is not o200k's, is counted directly. Raises ``ValueError`` for a span
    outside ``text`` and :class:`TokenizerUnavailable`.
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
        if first is None:
            inner.append(None)
            continue
        last = _HARD_REV.search(rev, size - t, size - s)
        h1, h2 = first.end(), size - 1 - last.start()
        inner.append((h1, h2))
        cuts.update((h1, h2))
    bounds = [0, *sorted(cuts), len(text)]
    at = {pos: k for k, pos in enumerate(bounds)}
    texts = [text[bounds[k]:bounds[k + 1]] for k in range(len(bounds) - 1)]
    nseg = len(texts)
    slot: dict[str, int] = {}
    ends: list[tuple[int, int] | int] = []
    for (s, t), cut in zip(spans, inner):
        pieces = [text[s:t]] if cut is None else [text[s:cut[0]], text[cut[1]:t]]
        idx = [slot.setdefault(p, nseg + len(slot)) for p in pieces]
        ends.append(idx[0] if cut is None else (idx[0], idx[1]))
    texts.extend(slot)  # dict keeps insertion order == assigned slot numbers
    counts = count_many(texts)
    prefix = [0]
    for n in counts[:nseg]:
        prefix.append(prefix[-1] + n)
    out = []
    for cut, end in zip(inner, ends):
        if cut is None:
            out.append(counts[end])
        else:
            out.append(counts[end[0]] + prefix[at[cut[1]]] - prefix[at[cut[0]]] + counts[end[1]])
    return prefix[-1], out
