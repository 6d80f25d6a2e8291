"""GFM tables straight to HTML inside markdown-it (:func:`install`): one token per table holding, byte for
byte, the HTML markdown-it's own table rule would render, which is much faster on server pages.
Rules: docs/PAGES.md, "Regen".
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Iterable, Iterator

from markdown_it import MarkdownIt
from markdown_it.common.utils import isStrSpace, mdTrim
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_block.table import MAX_AUTOCOMPLETED_CELLS, escapedSplit, getLine, headerLineRe
from markdown_it.rules_block.table import table as markdown_it_table

TOKEN = "html_table"
# A cell the inline parser would turn into one text token: no character that starts an inline rule
# other than text and backslash escapes, every backslash escaping ASCII punctuation.
_PLAIN = re.compile(r"(?:[^\\`*_\[\]!<>&\x00\r\n]|\\[!-/:-@\[-`{-~])*")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def install(md: MarkdownIt, cell_text: Callable[[str], str], inline_cell: Callable[[str, str], str],
            table_open: str, table_close: str) -> Callable[[list[str], str], str | None]:
    """Replace ``md``'s table rule. ``cell_text``: the HTML of a cell's text run (what the cell text
    render rule gives); ``inline_cell(content, folder)``: the HTML of any cell content by markdown-it's
    inline parser for a page in ``folder`` (the parse's ``env["folder"]``; memoised here);
    ``table_open``/``table_close``: what the table_open/table_close render rules give.
    Returns ``lines_table(lines, folder)``: the HTML the rule renders for ``lines`` (unindented lines
    without tabs, after which a blank line or the end of the page follows) when they make exactly one
    table, else None."""
    slow = functools.lru_cache(maxsize=65536)(inline_cell)

    @functools.lru_cache(maxsize=65536)  # dates, statuses, counts and tool names repeat across pages
    def plain(content: str) -> str:
        return cell_text(unescaped(content))

    def rule(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
        if silent:  # the paragraph and reference rules asking whether a table starts here
            return markdown_it_table(state, startLine, endLine, silent)
        folder = str(state.env.get("folder", ""))
        return _table(state, startLine, endLine, functools.partial(element, folder), table_open, table_close)

    @functools.lru_cache(maxsize=65536)
    def element(folder: str, tag: str, style: str, column: str) -> str:
        """A whole cell (``<td style>…</td>``) from its column's untrimmed text."""
        content = mdTrim(column)
        if not content:
            return f"<{tag}{style}></{tag}>\n"
        html_ = plain(content) if plain_text(content) else slow(content, folder)
        return f"<{tag}{style}>{html_}</{tag}>\n"

    def lines_table(lines: list[str], folder: str) -> str | None:
        if len(lines) < 2:
            return None
        made = _html(lines[0], lines[1], lines[2:], functools.partial(element, folder), table_open, table_close)
        return made[0] if made is not None and made[1] == len(lines) - 2 else None

    md.block.ruler.at("table", rule, {"alt": ["paragraph", "reference"]})
    md.add_render_rule(TOKEN, lambda self, tokens, idx, options, env: tokens[idx].content)
    return lines_table


def plain_text(content: str) -> bool:
    """Whether markdown-it's inline parser turns ``content`` into text alone (see ``_PLAIN``): its
    characters once each backslash escape is undone (:func:`unescaped`)."""
    return _PLAIN.fullmatch(content) is not None


def unescaped(content: str) -> str:
    """``content`` with each backslash escape of ASCII punctuation replaced by the character it escapes."""
    return _ESCAPE.sub(r"\1", content) if "\\" in content else content


@functools.lru_cache(maxsize=4096)  # a page's tables share a few delimiter rows, and so do its pages
def aligns(text: str) -> tuple[str, ...] | None:
    """The delimiter row's alignments, or None when ``text`` (a line from its first non-space character)
    is not a delimiter row (markdown-it's checks)."""
    pos, end = 0, len(text)
    if pos >= end:
        return None
    first = text[pos]
    pos += 1
    if first not in ("|", "-", ":") or pos >= end:
        return None
    second = text[pos]
    pos += 1
    if second not in ("|", "-", ":") and not isStrSpace(second):
        return None
    if first == "-" and isStrSpace(second):
        return None
    while pos < end:
        ch = text[pos]
        if ch not in ("|", "-", ":") and not isStrSpace(ch):
            return None
        pos += 1
    columns = text.split("|")
    found = []
    for i, column in enumerate(columns):
        t = mdTrim(column)
        if not t:
            if i == 0 or i == len(columns) - 1:
                continue
            return None
        if not headerLineRe.search(t):
            return None
        if t[-1] == ":":
            found.append("center" if t[0] == ":" else "right")
        elif t[0] == ":":
            found.append("left")
        else:
            found.append("")
    return tuple(found)


def _cells(line_text: str) -> list[str]:
    columns = escapedSplit(line_text) if "\\|" in line_text else line_text.split("|")  # the same without an escaped pipe
    if columns and columns[0] == "":
        columns.pop(0)
    if columns and columns[-1] == "":
        columns.pop()
    return columns


def _table(state: StateBlock, startLine: int, endLine: int, element: Callable[[str, str, str], str],
           table_open: str, table_close: str) -> bool:
    if startLine + 2 > endLine:
        return False
    nextLine = startLine + 1
    if state.sCount[nextLine] < state.blkIndent or state.is_code_block(nextLine) or state.is_code_block(startLine):
        return False
    oldParentType = state.parentType
    state.parentType = "table"
    made = _html(getLine(state, startLine), getLine(state, nextLine), _body_lines(state, startLine + 2, endLine),
                 element, table_open, table_close)
    state.parentType = oldParentType
    if made is None:
        return False
    token = state.push(TOKEN, "", 0)
    token.map = [startLine, startLine + 2 + made[1]]
    token.content = made[0]
    state.line = startLine + 2 + made[1]
    return True


def _body_lines(state: StateBlock, nextLine: int, endLine: int) -> Iterator[str]:
    """The text of each line from ``nextLine`` on until one the table cannot hold."""
    terminatorRules = state.md.block.ruler.getRules("blockquote")
    while nextLine < endLine:
        if state.sCount[nextLine] < state.blkIndent or state.is_code_block(nextLine):
            return
        # a line starting with a pipe starts no block a table ends at (fence, quote, rule, list, HTML, heading)
        if state.src[state.bMarks[nextLine] + state.tShift[nextLine]: state.eMarks[nextLine]][:1] != "|" \
                and any(rule(state, nextLine, endLine, True) for rule in terminatorRules):
            return
        yield getLine(state, nextLine)
        nextLine += 1


def _html(header: str, delimiter: str, rows: Iterable[str], element: Callable[[str, str, str], str],
          table_open: str, table_close: str) -> tuple[str, int] | None:
    """(the table's HTML, how many of ``rows`` it holds), or None when ``header`` and ``delimiter`` (each a
    line from its first non-space character) start no table; it ends at a blank row or when
    autocompleting the short rows would pass markdown-it's bound."""
    alignments = aligns(delimiter)
    if alignments is None:
        return None
    lineText = mdTrim(header)
    if "|" not in lineText:
        return None
    columns = _cells(lineText)
    columnCount = len(columns)
    if columnCount == 0 or columnCount != len(alignments):
        return None

    styles = [f' style="{html.escape("text-align:" + a)}"' if a else "" for a in alignments]
    out = [table_open, "<thead>\n<tr>\n"]
    td = ["td"] * columnCount
    out.extend(map(element, ["th"] * columnCount, styles, columns))
    out.append("</tr>\n</thead>\n")
    autocompleted = 0
    taken = 0
    for row in rows:
        lineText = mdTrim(row)
        if not lineText:
            break
        columns = _cells(lineText)
        autocompleted += columnCount - len(columns)
        if autocompleted > MAX_AUTOCOMPLETED_CELLS:
            break
        if not taken:
            out.append("<tbody>\n")
        taken += 1
        out.append("<tr>\n")
        if len(columns) < columnCount:
            columns += [""] * (columnCount - len(columns))
        out.extend(map(element, td, styles, columns))  # map stops at the shorter: extra columns are dropped
        out.append("</tr>\n")
    if taken:
        out.append("</tbody>\n")
    out.append(table_close)
    return "".join(out), taken
