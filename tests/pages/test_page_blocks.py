"""Server pages converted without markdown-it's block parser (harness/pages/page_blocks.py) give the bytes
markdown-it's own rules give (``server_html._markdown(direct_tables=False)``): on this repository's server
pages, the synthetic bench repository's, the scenario's, on hostile variants of a page holding every
kind of block the subset has, and on random pages of the subset's blocks with hostile text in their lines;
a page with anything outside the subset goes to markdown-it, and a page inside it does not."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from harness.pages import page_blocks, server_html
from harness.pages.regen import render_all
from tests.pages import builders as b
from tests.pages.test_html_table import _both  # (markdown-it's own rules' page, the direct parser's)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def block_parses(monkeypatch) -> list[str]:
    """The pages (their Markdown) the direct parser handed to markdown-it's block parser."""
    parsed: list[str] = []
    real = server_html.markdown_it_block

    def counted(state):
        parsed.append(state.src)
        real(state)

    monkeypatch.setattr(server_html, "markdown_it_block", counted)
    return parsed


def _same(pages: dict[str, str], block_parses: list[str]) -> int:
    """Asserts each page converts to the same bytes both ways; the number that skipped markdown-it's block parser."""
    fast = 0
    for name, markdown in pages.items():
        before = len(block_parses)
        reference, direct = _both(markdown, name)
        assert direct == reference, name
        fast += len(block_parses) == before
    return fast


def _repository_pages() -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs/servers").glob("*.md"))}


def test_repository_pages_sample(block_parses):
    pages = dict(list(_repository_pages().items())[::25])
    assert len(pages) > 10
    assert _same(pages, block_parses) >= len(pages) - 1


@pytest.mark.slow
def test_repository_pages(block_parses):
    pages = _repository_pages()
    fast = _same(pages, block_parses)
    # a page holding "]:" anywhere (a link reference definition needs one) goes to markdown-it
    assert fast == sum("]:" not in text for text in pages.values()) > len(pages) * 0.95


@pytest.mark.slow
def test_bench_repository_pages(tmp_path, block_parses):
    spec = importlib.util.spec_from_file_location("bench_regen", ROOT / "bench" / "regen.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.build(tmp_path, 12)
    pages = {path[len("docs/servers/"):-len(".md")]: text for path, text in render_all(tmp_path).items()
             if path.startswith("docs/servers/") and path.endswith(".md")}
    assert len(pages) == 12
    assert _same(pages, block_parses) == 12


def test_scenario_pages(published, block_parses):
    root, _, _ = published
    pages = {path[len("docs/servers/"):-len(".md")]: text for path, text in render_all(root).items()
             if path.startswith("docs/servers/") and path.endswith(".md")}
    assert pages
    assert _same(pages, block_parses) == sum("]:" not in text for text in pages.values()) > 0


# A page with every kind of block the subset holds, shaped as the page writers write them.
PAGE = """# alpha\\_server

**3,617 tokens** of tool definitions — band **light**, 5 tools. A client pays this (o200k\\_base).
Second line of the paragraph with `code` and [a link](beta.md) · [up](../METHODOLOGY.md)

## What it is

- Category: community
- Repository: <https://github.com/a/b>
- **Claude** (tools-delta/v1): no count on record.

```sh
npx -y @a/b@3.3.0
  indented <b> & "quoted"
```

```
no language
```

| Tool | Tokens | Note |
|---|---:|:--|
| jira\\_post | 870 | a \\| b |
| **Total** | **3,617** |  |

### Standard error (last lines)

> \\[INFO\\] Registered tool groups: docs, drive<br>
> \\- AGENT\\_URL: Base URL<br>
> at async file:///home/x.js:209:9<br>

![alpha: over time](../trends/alpha.svg)

1 earlier row is left out. 2,000 tokens. é 漢字 🙂 &amp; \\# not a heading
"""

HOSTILE = ["# x", "#x", "####### x", "## x #", "## x \\#", "##", "- x", "-x", "- - -", "-", "---", "===", "***",
           "**x**", "** x", "* x", "+ x", "_x_", "___", "> x", ">x", ">  x", "> > x", ">", "|", "| a |", "|---|",
           "| a | b |", "|-|-|", "a | b", ":--", "--- | ---", "`x`", "``x``", "```", "```sh", "````", "~~~",
           "<div>", "<div>x</div>", "<!-- c -->", "<https://e.org>", "[x]: /y", "[x]", "\tx", "x\ty", " x", "   x",
           "    x", "1. x", "1) x", "10. x", "1 x", "١. x", "\x00", "\u2028x", "x\u2028", "\u00a0x", "x  ", "x\\",
           "&amp;", "\ufeffx", "\ud800", "é", "x" * 5000, "", "   ", "\\# x", "\\- x", "\r", "\x0bx", "\x1cx",
           "\u2003x", "[a](b.md)", "![i](p.png)", "<br>", "x<br>", "{x}", "1.", "\\", "*", "=", "= x"]


def _variant(rnd: random.Random) -> str:
    lines = PAGE.split("\n")
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randrange(len(lines))
        piece = rnd.choice(HOSTILE)
        how = rnd.randrange(7)
        if how == 5:  # blocks meet without a blank line between them
            del lines[at]
        elif how == 6:
            lines.insert(at, lines[at])
        elif how == 0:
            lines.insert(at, piece)
        elif how == 1:
            lines[at] = piece
        elif how == 2:
            lines[at] = piece + lines[at]
        elif how == 3:
            lines[at] = lines[at] + piece
        else:
            prefix = next(p for p in ("- ", "> ", "| ", "") if lines[at].startswith(p))
            lines[at] = prefix + piece + lines[at][len(prefix):]
    return "\n".join(lines)


def test_hostile_variants(block_parses):
    rnd = random.Random(41)
    variants = {f"v{i}": _variant(rnd) for i in range(500)}
    fast = _same(variants, block_parses)
    assert 40 < fast < len(variants) - 40  # both ways taken often


# Recorded text as hostile as the catalog and records allow, for the page writers to escape.
EVIL = ["# head", "- item", "> quote", "a | b", "`tick`", "```sh", "<div>x</div>", "\tx", "   lead", "---", "1. one",
        "a\r\nb", "nul\x00x", "sep\u2028x\u2029y", "x" * 3000, "* star", "|---|---|", "<br>"]


@pytest.mark.parametrize("outside", [[], ["[x]: /y"], ["==="]])
def test_hostile_recorded_text(outside, tmp_path, block_parses):
    texts = EVIL + outside  # the escaped "\\[x\\]: /y" holds "]:"; a list item "===" is not plain text
    evil = "\n".join(texts)
    tools = [b.tool(text[:60], text + " " + evil) for text in texts]
    printable = "\n".join(text for text in texts if text.isprintable())  # what the catalog accepts
    b.write_catalog(tmp_path, [b.entry("evil", notes=printable, category=texts[0], package=texts[2]),
                               b.entry("evil-fail")])
    b.write_record(tmp_path, b.measured("evil", tools, serverName=evil, serverVersion=texts[1],
                                        serverInstructions=evil, notes=texts))
    b.write_record(tmp_path, b.failed("evil-fail", "startup-failure", texts, stderrTail=evil))
    pages = {path[len("docs/servers/"):-len(".md")]: text for path, text in render_all(tmp_path).items()
             if path.startswith("docs/servers/") and path.endswith(".md")}
    assert len(pages) == 2
    assert _same(pages, block_parses) == (0 if outside else 2)


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_other_line_endings(ending, block_parses):
    # markdown-it turns them into "\n" before its block rule, so the direct parser sees "\n" too
    assert _same({"crlf": PAGE.replace("\n", ending)}, block_parses) == 1


def test_the_page_skips_markdown_it(block_parses):
    for text in (PAGE, PAGE.rstrip("\n"), PAGE + "\n\n", ""):
        assert _same({"alpha": text}, block_parses) == 1


@pytest.mark.parametrize("construct", [
    "[x]: /y\n\n[x]\n",  # a link reference definition
    "<div>\nx\n</div>\n",  # an HTML block
    "title\n===\n",  # a setext heading
    "    code\n",  # indented code
    "- a\n\n- b\n",  # a loose list
    "- a\nlazy\n",  # a lazy continuation
    "> a\nlazy\n",
    "para\n| a | b |\n|---|---|\n",  # a table interrupting a paragraph
    "# a | b\n|---|---|\n",  # a heading line taken as a table header
    "1. one\n",
    "* star\n",
    "x\ty\n",
    "```\nunclosed\n",
])
def test_outside_the_subset_goes_to_markdown_it(construct, block_parses):
    page = PAGE + "\n" + construct
    assert page_blocks.body(page, "docs/servers", server_html._inline_token, lambda lines, folder: "") is None
    assert _same({"alpha": page}, block_parses) == 0
    assert block_parses == [page]


# Pieces of recorded text inside a line: inline markup, entity references, backslash escapes, pipes, Unicode
# spaces and the characters that open a block when they start a line.
PIECES = ["a", "Tool", " ", "  ", "é", "🙂", "\u00a0", "\u2003", "\u2028", "\x0b", "\x85", "\ufeff", "&amp;",
          "&#35;", "&nbsp;", "&", "\\", "\\|", "\\\\", "\\#", "|", "`", "``", "`x`", "*", "**", "_", "~", "#", "-",
          "+", ">", "<", "<br>", "<div>", "<!-- c -->", "[x](b.md)", "![i](p.png)", "<https://e.org>", "[", "]",
          "1.", ":", "="]
# How a line of text starts: characters that open no block.
STARTS = ["alpha", "**Total**", "`code`", "[a](b.md)", "é", "1,234", "a\\_b", "(x)", "\\# x", "&amp;", "$5",
          "{x}", "@u", "!"]
ENDS = ["", "", "  ", "\\", " ", "\u00a0", " #", " ## ", "<br>"]  # hard breaks, trailing spaces, closing "#"s


def _text(rnd: random.Random) -> str:
    return rnd.choice(STARTS) + "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 8))) + rnd.choice(ENDS)


def _block(rnd: random.Random) -> list[str]:
    kind = rnd.randrange(6)
    if kind == 0:
        return ["#" * rnd.randint(1, 6) + " " + _text(rnd)]
    if kind == 1:
        return [_text(rnd) for _ in range(rnd.randint(1, 3))]
    if kind in (2, 3):
        return [("- ", "> ")[kind - 2] + _text(rnd) for _ in range(rnd.randint(1, 3))]
    if kind == 4:
        code = ["".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 6))) for _ in range(rnd.randint(0, 3))]
        return ["```" + rnd.choice(["", "sh", "c++", "x-y_1"]), *code, "```"]
    columns = rnd.randint(1, 3)

    def row(cells: int) -> str:
        return "|" + "|".join("".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 3))) for _ in range(cells)) + \
            rnd.choice(["|", "", " ", "\\"])
    delimiter = "|" + "|".join(rnd.choice(["---", ":--", "--:", ":-:", " - "]) for _ in range(columns)) + "|"
    rows = [row(rnd.choice([columns, columns - 1, columns + 1])) for _ in range(rnd.randint(0, 3))]
    return [row(columns), delimiter, *rows]


def test_random_pages_in_the_subset(block_parses):
    rnd = random.Random(7)
    pages = {}
    for i in range(400):
        lines: list[str] = []
        for _ in range(rnd.randint(1, 6)):
            lines += [*_block(rnd), ""]
        pages[f"r{i}"] = "\n".join(lines)
    assert _same(pages, block_parses) > len(pages) // 2
