"""Recorded values as one safe line (:func:`one_line`), escaped for Markdown (:func:`md`) and HTML,
and numbers formatted.

Rules: docs/PAGES.md, "Text".
"""

from __future__ import annotations

import functools
import html
import json
import math
import re

from harness.core.canonical import stringify
from harness.util import untrusted

_SURROGATE = re.compile("[\ud800-\udfff]")
_BREAKS = re.compile(f"[{untrusted.UNSAFE_CHARS}]+")  # the one definition of unsafe
_SPACES = re.compile(" {2,}")
ELLIPSIS = "…"


def one_line(value: object, limit: int | None = None) -> str:
    """``value`` as one printable line (see module docstring); ``None`` becomes ``""``."""
    if value is None:
        return ""
    if not isinstance(value, str):
        value = stringify(value)
        if value is None:
            return ""
    if value.isascii() and value.isprintable():  # no surrogate, break, control or invisible character
        text = (_SPACES.sub(" ", value) if "  " in value else value).strip()
    else:
        text = _SPACES.sub(" ", _BREAKS.sub(" ", _SURROGATE.sub("\ufffd", value))).strip()
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + ELLIPSIS
    return text


@functools.lru_cache(maxsize=65536, typed=True)  # a page writes hundreds of counts, most of them seen before
def num(value: int | float | None, empty: str = "—") -> str:
    """An integer count with thousands separators (``2,378``); ``empty`` for ``None``."""
    if value is None:
        return empty
    return f"{int(value):,}"


def as_int(value: object) -> int | None:
    """A recorded count (``jsparse`` yields floats: ``2378.0``) as ``int``; ``None`` otherwise."""
    if type(value) is float:  # the two kinds a record holds, first: a warm regen reads ~100 counts a server
        return int(value) if math.isfinite(value) else None
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return int(value)


# Break opportunities inside an identifier: after ``_``, ``-``, ``.``, ``/``, ``:``, and at a case
# boundary (``listIssues`` → ``list|Issues``, ``HTTPServer`` → ``HTTP|Server``).
_BREAK = re.compile(r"(?<=[_\-./:])(?=.)|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def breakable(value: object, limit: int | None = None) -> str:
    """``value`` as escaped HTML with ``<wbr>`` at every break opportunity (see ``_BREAK``), so a
    long tool or server name wraps between its parts instead of in the middle of a word."""
    return with_breaks(one_line(value, limit))


def with_breaks(text: str) -> str:
    """``text`` escaped, with ``<wbr>`` at every break opportunity and otherwise unchanged (spaces
    kept: a text run inside a table cell sits beside links and code)."""
    return "<wbr>".join(html.escape(part) for part in _BREAK.split(text) if part)


def shorten(value: object, limit: int) -> str:
    """``value`` as one line of at most ``limit`` characters, cut at a word boundary (``…`` marks
    the cut). Not escaped."""
    text = one_line(value)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + ELLIPSIS


def embedded_json(document: object) -> str:
    """``document`` as JSON safe inside a ``<script type="application/json">`` element: no raw
    ``<``, ``>`` or ``&`` (nothing can close the element), nothing a terminal or editor acts on."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return untrusted.json_text(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


_TABLE = {ord(c): "\\" + c for c in "\\`*_[]()!|~#$"} | {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"}
_LIST_START = re.compile(r"^(\d{1,9})([.)])")


def md(value: object, limit: int | None = None) -> str:
    """``value`` as Markdown-inert text on one line (see module docstring)."""
    if type(value) is str and len(value) <= _MEMO_CHARS:  # names and notes repeat across a page and pages
        return _md_text(value, limit)
    if isinstance(value, str):
        value = untrusted.escape(value, spaces=True)
    return _inert(one_line(value, limit))


_MEMO_CHARS = 512  # longer text is rare: the memo holds at most about 32768 × 4 × 512 characters


@functools.lru_cache(maxsize=32768, typed=True)
def _md_text(value: str, limit: int | None) -> str:
    return _inert(one_line(untrusted.escape(value, spaces=True), limit))


def _inert(line: str) -> str:
    """A line of text (``one_line``'s) escaped for Markdown."""
    text = line.translate(_TABLE)
    if text[:1] in ("-", "+"):
        return "\\" + text
    return _LIST_START.sub(r"\1\\\2", text, count=1)
