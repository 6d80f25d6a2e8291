"""The one Markdown escaping function of every generated Markdown file: :func:`md`.

Rules: docs/PAGES.md, "Text".
"""

from __future__ import annotations

import re

from harness.pages.text import one_line
from harness.util import untrusted

_TABLE = {ord(c): "\\" + c for c in "\\`*_[]()!|~#$"} | {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"}
_LIST_START = re.compile(r"^(\d{1,9})([.)])")


def md(value: object, limit: int | None = None) -> str:
    """``value`` as Markdown-inert text on one line (see module docstring)."""
    if isinstance(value, str):
        value = untrusted.escape(value, spaces=True)
    text = one_line(value, limit).translate(_TABLE)
    if text[:1] in ("-", "+"):
        return "\\" + text
    return _LIST_START.sub(r"\1\\\2", text, count=1)
