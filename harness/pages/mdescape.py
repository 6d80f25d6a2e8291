"""The one Markdown escaping function every generated Markdown file uses.

``md(value, limit=None)`` returns text that renders as exactly its characters inside a GitHub
Markdown table cell, a list item, a heading or a paragraph, and can neither break the table nor
inject markup:

* the value is first reduced to one line: line breaks and tabs become spaces, and every other
  control, bidi or invisible format character and any lone surrogate becomes a visible escape
  (``\\x1b``, ``\\u202e``, ``\\udc80``) through :func:`harness.util.untrusted.escape`, the one
  path for untrusted text (issue #9); then :func:`harness.pages.text.one_line` collapses spaces
  and ``limit`` cuts long text;
* ``&``, ``<`` and ``>`` become ``&amp;``, ``&lt;`` and ``&gt;`` — no raw HTML tag (``<script>``,
  ``<img onerror=…>``) and no entity of the input's own survives into the file;
* the ASCII characters that open inline markup anywhere in a line — ``\\ ` * _ [ ] ( ) ! | ~ #``
  and GitHub's math delimiter ``$`` — are backslash-escaped (CommonMark lets any ASCII punctuation
  be escaped; GFM tables honour ``\\|``), so no code span, emphasis, link, image, strikethrough,
  math or table delimiter forms;
* a leading ``-``/``+`` or ordered-list marker (``12.`` / ``12)``) is escaped, so a list item or
  cell that starts with one cannot open a nested list.

Rendered text is unchanged; the raw file reads with backslashes (``create\\_entities``).
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
