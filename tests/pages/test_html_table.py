"""The direct table rule (harness/pages/html_table.py) and the memoised inline conversion
(``server_html._inline_memoised``) give the bytes markdown-it's own rules give: on hand-written tables
of every kind a page can hold (alignment, ragged rows, escaped pipes, inline markup, links, raw HTML,
tables in lists and block quotes, tables a paragraph runs into, link references), on inline text
outside tables, on random tables and random text drawn from the characters that start inline rules;
and on the real pages regen writes."""

from __future__ import annotations

import random

import pytest

from harness.pages import server_html
from harness.pages.regen import render_all

REFERENCE = server_html._markdown(direct_tables=False)


def _both(markdown: str, name: str = "alpha") -> tuple[str, str]:
    direct = server_html.render(name, markdown)
    saved = server_html._MD
    server_html._MD = REFERENCE
    try:
        return server_html.render(name, markdown), direct
    finally:
        server_html._MD = saved


CASES = {
    "aligned": "| Tool | Tokens | Mid | Left |\n|---|---:|:---:|:--|\n| a\\_b | 1,234 | x | y |\n",
    "ragged rows": "| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 | 5 |\n|  |  |  |\n",
    "no body": "| a | b |\n|---|---|\n\nafter\n",
    "escaped pipes": "| a | b |\n|---|---|\n| x \\| y | `c \\| d` |\n| \\\\| z |\n",
    "inline markup": "| a | b |\n|---|---|\n| **Total** | *unattributed* (x) |\n| `code_x` | ![i](p.png) |\n",
    "links": "| a |\n|---|\n| [beta](beta.md) |\n| [out](https://e.org/x.md) |\n| [up](../METHODOLOGY.md) |\n",
    "raw html": "| a |\n|---|\n| one<br>two |\n| <b>bold</b> <script>x</script> |\n| a & b &amp; &#60; |\n",
    "escapes": "| a |\n|---|\n| \\a \\_ \\\\ \\* trailing\\ |\n| tab\there |\n| x\\ |\n",
    "names": "| a |\n|---|\n| listIssues HTTPServer_v2 a.b/c:d ~x~ $y# |\n| éé 漢字 🙂 |\n",
    "paragraph runs into it": "text before\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "ended by a heading": "| a |\n|---|\n| 1 |\n## next\n",
    "ended by a quote": "| a |\n|---|\n| 1 |\n> quoted\n",
    "in a list": "- item\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n- tight\n  | a |\n  |---|\n  | 1 |\n",
    "in a quote": "> | a | b |\n> |---|---|\n> | 1 | `2` |\n",
    "not a table": "| a | b |\n|---|\n| 1 | 2 |\n\n- | x |\n\n|a|\n|-|\n",
    "indented code": "    | a |\n    |---|\n",
    "no pipes in header": "a\n---|---\n",
    "link references": "| a |\n|---|\n| [beta] |\n| [x][o] |\n\n[beta] and [out][o]\n\n[beta]: beta.md\n[o]: https://e.org/x.md \"t\"\n",
    "inline outside tables": "# Head *x* [a](alpha.md)\n\npara <b>x</b> &amp; <br> `c` \\_ ![i](p.png)\n\n"
                             "- [b](beta.md): 1\n- **x** <br/>\n\n> [up](../METHODOLOGY.md) ~y~\n\n## Head *x* [a](alpha.md)\n",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_html_as_markdown_it(case):
    reference, direct = _both(CASES[case])
    assert direct == reference


SPECIALS = ["\\", "`", "*", "_", "[", "]", "(", ")", "!", "<", ">", "&", "|", "~", "#", "$", ":", "-", " ", "\t",
            "a", "Z", "9", "é", "<br>", "&amp;", "\\|", "\\_", "](x.md)", "[", "**", "\x00", "\ud800"]


def _cell(rnd: random.Random) -> str:
    return "".join(rnd.choice(SPECIALS) for _ in range(rnd.randint(0, 8)))


def test_random_tables():
    rnd = random.Random(26)
    for _ in range(300):
        columns = rnd.randint(1, 4)
        lines = ["| " + " | ".join(_cell(rnd) or "h" for _ in range(columns)) + " |",
                 "|" + "|".join(rnd.choice(["---", ":--", "--:", ":-:"]) for _ in range(columns)) + "|"]
        lines += ["| " + " | ".join(_cell(rnd) for _ in range(rnd.randint(0, columns + 1))) + " |"
                  for _ in range(rnd.randint(0, 4))]
        markdown = "\n".join(lines) + "\n"
        reference, direct = _both(markdown)
        assert direct == reference, markdown


def test_real_pages(published):
    root, _, _ = published
    pages = {path: text for path, text in render_all(root).items()
             if path.startswith("docs/servers/") and path.endswith(".md")}
    assert pages
    for path, text in pages.items():
        reference, direct = _both(text, path[len("docs/servers/"):-len(".md")])
        assert direct == reference


def test_random_text():
    rnd = random.Random(27)
    lines = [rnd.choice(["", "# ", "## ", "- ", "> ", "1. "]) + _cell(rnd) + rnd.choice(SPECIALS) for _ in range(40)]
    for _ in range(150):  # the same lines recur across pages: later pages take them from the memo
        markdown = "\n".join(rnd.choice(lines) + rnd.choice(["", "\n"]) for _ in range(rnd.randint(1, 6))) + "\n"
        reference, direct = _both(markdown)
        assert direct == reference, markdown


# What a plain inline token may hold (html_table.plain_text): any character but those that start an inline
# rule, and backslash escapes of ASCII punctuation; with a few that make it not plain.
PLAIN = ["a", "Z", "9", " ", "  ", '"', "'", "#", "$", "%", "+", "-", ":", "=", "@", "^", "{", "}", "~", "|", ".", "(", ")",
         "é", "漢", "🙂", "\u00a0", "\u200b", "\ud800", "\\_", "\\\\", "\\*", "\\[", "\\<", "\\&", "\\\"", "\\`", "\\|"]
NOT_PLAIN = ["\\a", "\\", "*", "_", "`", "[", "]", "!", "<", ">", "&", "&amp;", "\n", "\r", "\x00"]


def test_plain_inline_text():
    """A heading, paragraph, list item or quote of plain text (escaped directly, not parsed) gives markdown-it's
    bytes, as does text one character away from plain."""
    rnd = random.Random(28)
    for _ in range(400):
        text = "".join(rnd.choice(PLAIN) for _ in range(rnd.randint(1, 12)))
        if rnd.random() < 0.3:
            at = rnd.randint(0, len(text))
            text = text[:at] + rnd.choice(NOT_PLAIN) + text[at:]
        text = "x" + text + "y"  # a block's content is trimmed before it is parsed
        for markdown in (f"# {text}\n", f"{text}\n", f"- {text}\n", f"> {text}\n"):
            reference, direct = _both(markdown)
            assert direct == reference, markdown
    assert server_html._inline_token('a \\_b "c" & d', "docs/servers") == markdown_it_inline('a \\_b "c" & d')
    assert server_html._inline_token('a \\_b "c" & d', "docs/servers") == 'a _b &quot;c&quot; &amp; d'


def markdown_it_inline(text: str) -> str:
    return REFERENCE.renderer.render(REFERENCE.parseInline(text, {}), REFERENCE.options, {})


@pytest.mark.parametrize("markdown", ["# a\r\n\r\npara\rline\r\n| a |\r\n|---|\r\n| 1 |\r\n",
                                      "# a\x00b\n\npara \x00\n\n| a\x00 |\n|---|\n| \x00 |\n", "a\r\n\x00\n"])
def test_carriage_returns_and_nul(markdown):
    """A page holding a carriage return or NUL is normalised as markdown-it does."""
    reference, direct = _both(markdown)
    assert direct == reference
