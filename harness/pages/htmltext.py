"""Recorded text as HTML for the dashboard: names that break where a reader expects, and reasons
that stay short with the full text kept behind a disclosure (issue #15, "The dashboard").

Input is reduced to one line by :func:`harness.pages.text.one_line` first and escaped with
``html.escape`` here, so the result is safe to place in an element or an attribute value.
"""

from __future__ import annotations

import html
import json
import re

from harness.pages.text import ELLIPSIS, one_line
from harness.util import untrusted

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
