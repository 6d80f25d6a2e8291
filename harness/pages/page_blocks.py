"""A server page's Markdown straight to HTML, skipping markdown-it's block parser, when every block is one
of the few kinds the page writers emit (:func:`body`); byte for byte the body markdown-it renders.

The subset, judged on the text itself (anything else, anywhere, and :func:`body` returns None):

- no tab, carriage return or NUL (markdown-it's core turns the last two into others before its block
  rule), no ``]:`` (a link reference definition needs one), no line starting with a space outside fenced code;
- ATX headings: ``#`` to ``######``, a space, text not ending in ``#`` (trailing spaces aside);
- paragraphs of plain lines (a plain line starts with a character no block starts with, :func:`_plain`),
  followed by a blank line or the end;
- tight bullet lists: lines ``- `` + plain text; block quotes: lines ``> `` + plain text (one paragraph);
  either followed by a blank line or the end, and a list not by another ``-`` line after blank lines;
- fenced code: three backticks and a word or nothing, lines none of which starts with three backticks
  after spaces, then a line of three backticks;
- tables: lines starting with ``|``, followed by a blank line or the end, that markdown-it's table rule
  takes as one table (``lines_table``);
- a line followed by a table delimiter row only as such a table's header.

Rules: docs/PAGES.md, "Regen".
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it.common.utils import escapeHtml, mdTrim

from harness.pages import html_table

# First characters of a plain line, none of which starts a block ("[" starts only a link reference
# definition, which needs a "]:" the page does not hold).
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!\"$%&'(),./;?@\\^{}[")
_ORDERED = re.compile(r"[0-9]+[.)]")
_HEADING = re.compile(r"(#{1,6}) ")
_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)")


def _plain(line: str) -> bool:
    """Whether ``line`` is paragraph text wherever it stands: it opens no block, ends no paragraph and
    underlines no heading."""
    first = line[:1]
    if first in _SAFE:
        return True
    if "0" <= first <= "9":
        return not _ORDERED.match(line)
    if first == "`":
        return line[1:2] != "`"
    if first == "*":  # "**x": neither a list item nor a rule
        return line[1:2] == "*" and line[2:3] not in ("", " ", "*")
    return first > "\x7f" and first.isprintable() and not first.isspace()


def _delimiter_row(line: str) -> bool:
    """Whether markdown-it's table rule takes ``line`` (unindented) as a delimiter row."""
    return line[:1] in ("|", "-", ":") and html_table.aligns(line) is not None


def _run(lines: list[str], start: int, prefix: str) -> int:
    """The end of the lines from ``start`` that are ``prefix`` + plain text; ``start`` when there are none or
    a line other than a blank one follows them (it could continue them lazily)."""
    end = start
    while end < len(lines) and lines[end].startswith(prefix) and _plain(lines[end][len(prefix):]):
        end += 1
    return end if end == len(lines) or not lines[end] else start


def body(markdown: str, folder: str, inline: Callable[[str, str], str],
         lines_table: Callable[[list[str], str], str | None]) -> str | None:
    """The HTML markdown-it renders for ``markdown``, or None when the page is outside the subset (module
    docstring). ``inline(content, folder)``: the HTML of an inline token; ``lines_table(lines, folder)``: a
    table's HTML or None (what ``html_table.install`` returns); ``folder``: the page's."""
    if "\t" in markdown or "\r" in markdown or "\0" in markdown or "]:" in markdown:
        return None
    lines = markdown.split("\n")
    if lines[-1] == "":
        lines.pop()
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:  # i is always where a block may start
        line = lines[i]
        if not line:
            i += 1
            continue
        first = line[0]
        if i + 1 < n and _delimiter_row(lines[i + 1]):  # markdown-it tries a table first
            if first != "|":
                return None
        if first == "|":
            end = i
            while end < n and lines[end][:1] == "|":
                end += 1
            table = lines_table(lines[i:end], folder) if end == n or not lines[end] else None
            if table is None:
                return None
            out.append(table)
            i = end
        elif first == "#":
            heading = _HEADING.match(line)
            text = line.rstrip(" \t")
            if heading is None or text.endswith("#"):
                return None
            tag = f"h{len(heading.group(1))}"
            out.append(f"<{tag}>{inline(mdTrim(text[len(heading.group(1)):]), folder)}</{tag}>\n")
            i += 1
        elif first == "`" and line.startswith("```"):
            fence = _FENCE.fullmatch(line)
            if fence is None:
                return None
            end = i + 1
            while end < n and lines[end] != "```":
                if lines[end].lstrip(" ").startswith("```"):
                    return None
                end += 1
            if end == n:
                return None
            code = escapeHtml("".join(text + "\n" for text in lines[i + 1:end]))
            lang = fence.group(1)
            out.append(f'<pre><code class="language-{lang}">{code}</code></pre>\n' if lang
                       else f"<pre><code>{code}</code></pre>\n")
            i = end + 1
        elif line.startswith("- "):
            end = _run(lines, i, "- ")
            if end == i:
                return None
            after = end
            while after < n and not lines[after]:
                after += 1
            if after < n and lines[after][0] == "-":  # a later item would make the list loose
                return None
            items = "".join(f"<li>{inline(mdTrim(text[2:]), folder)}</li>\n" for text in lines[i:end])
            out.append(f"<ul>\n{items}</ul>\n")
            i = end
        elif line.startswith("> "):
            end = _run(lines, i, "> ")
            if end == i:
                return None
            content = mdTrim("\n".join(text[2:] for text in lines[i:end]))
            out.append(f"<blockquote>\n<p>{inline(content, folder)}</p>\n</blockquote>\n")
            i = end
        elif _plain(line):
            end = _run(lines, i, "")
            if end == i:
                return None
            content = mdTrim("\n".join(lines[i:end]))
            out.append(f"<p>{inline(content, folder)}</p>\n")
            i = end
        else:
            return None
    return "".join(out)
