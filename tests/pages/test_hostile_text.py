"""Hostile recorded text (pipes, backticks, HTML, newlines, lone surrogates, 10k-character
strings) cannot break a generated table or inject markup (Markdown safety)."""

from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from harness.pages.text import md, one_line
from harness.pages.regen import regen
from tests.pages import builders as b

EVIL = "a|b`c`<script>alert(1)</script>\n| x | y |\n# heading [link](javascript:alert(1)) *em* $x$ ~~s~~ \\|"
# What the catalog accepts in an identifier-like field (one line, at most 64 characters).
EVIL_LINE = "a|b`c`<script>alert(1)</script>| x |[l](javascript:x)*e*~~s~~\\|"
LONG = "long|" * 2000  # 10,000 characters with pipes
TOOLS = [
    b.tool("pipe|name", LONG),
    b.tool("`tick`", "x"),
    b.tool("<script>alert('t')</script>", "<img src=x onerror=alert(1)>"),
    b.tool("line\nbreak\r\nname\u2028sep", "y"),
    b.tool("n" * 10_000, "z"),
    b.tool("lone \ud800 surrogate", "w"),
    b.tool("- 1. [x](y)", "v"),
]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [
        b.entry("evil", notes=EVIL, category=EVIL_LINE, package=EVIL_LINE,
                repo="https://x.example/<script>alert(1)</script>"),
        b.entry("evil-fail", notes=EVIL),
        b.entry("plain"),
    ])
    iso = {**b.HOST, "arch": "<img src=x onerror=alert(1)>|", "os": EVIL, "runtimes": {"node": EVIL}}
    evil = b.measured("evil", TOOLS, serverName=EVIL, serverVersion=LONG, launchCommand=EVIL + LONG,
                      serverInstructions=EVIL + LONG, notes=[EVIL, LONG], isolation=iso,
                      negotiatedProtocolVersion=EVIL)
    b.write_record(root, evil)
    b.write_record(root, b.failed("evil-fail", "startup-failure", [EVIL, LONG], stderrTail=EVIL + "\n" + LONG))
    # the row of the record's own date says what the record says (regen refuses one that does not)
    b.write_history(root, ["2026-11-23,evil,10,7,measured,",
                           f"{evil['measuredAt'][:10]},evil,{evil['totalTokens']},{evil['toolCount']},measured,host"])
    regen(root)
    return root


def _generated(root: Path, suffix: str) -> list[Path]:
    return sorted(p for p in root.rglob(f"*{suffix}") if p.is_file())


def test_markdown_tables_keep_their_column_count(hostile):
    files = _generated(hostile, ".md")
    assert len(files) == 5  # + results/regressions.md
    for path in files:
        text = path.read_text(encoding="utf-8")
        for table in b.md_tables(text):
            widths = {len(row) for row in table}
            assert len(widths) == 1, (path, [len(r) for r in table])
        assert max(len(line) for line in text.split("\n")) < 6000, path


def test_rendered_markdown_has_no_injected_markup(hostile):
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    for path in _generated(hostile, ".md"):
        source = path.read_text(encoding="utf-8")
        assert "<script" not in source.lower() and "<img" not in source.lower(), path
        rendered = renderer.render(source)
        assert "<script" not in rendered.lower() and "<img src=\"x\"" not in rendered.lower(), path
        assert "javascript:" not in _hrefs(rendered), path
        assert "<em>" not in rendered and "<s>" not in rendered and "<del>" not in rendered, path
        parser = _Cells()
        parser.feed(rendered)
        for widths in parser.tables:
            assert len(set(widths)) == 1, (path, widths)
        assert len(parser.tables) == len(b.md_tables(source)), path


def test_html_and_svg_escape_everything(hostile):
    for path in _generated(hostile, ".html") + _generated(hostile, ".svg"):
        text = b.without_own_scripts(path.read_text(encoding="utf-8"))  # the page's own
        text = re.sub(r'<img src="\.\./trends/[a-z0-9._-]+\.svg" alt="[^"<>]*" />', "", text, count=1)
        assert "<script" not in text.lower() and "<img" not in text.lower(), path
    page = (hostile / "docs/index.html").read_text(encoding="utf-8")
    data = page.split('<script type="application/json" id="rows">', 1)[1].split("</script>", 1)[0]
    rows = json.loads(data)["rows"]  # the dashboard draws its rows from this, inserting text escaped
    assert len(rows) == 3 and all("\n" not in r["name"] for r in rows)


def test_long_text_is_cut_in_tables(hostile):
    page = (hostile / "docs/servers/evil.md").read_text(encoding="utf-8")
    row = next(line for line in page.split("\n") if line.startswith("| nnnn"))
    assert len(row) < 400 and "…" in row


def test_escape_function_units():
    assert md("a|b") == "a\\|b"
    assert md("<script>") == "&lt;script&gt;"
    assert md("x\ny\r\nz") == "x y z"
    assert md("- item") == "\\- item" and md("3. item") == "3\\. item"
    assert md("a" * 20, 5) == "aaaa…"
    assert md(0) == "0" and md(False) == "false" and md(None) == ""
    assert one_line("lone \ud800") == "lone \ufffd"
    assert md("&amp;") == "&amp;amp;"


def _hrefs(rendered: str) -> str:
    return " ".join(part.split('"', 1)[0] for part in rendered.split('href="')[1:])


class _Cells(html.parser.HTMLParser):
    """Collects, per <table>, the number of cells in each row."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[int]] = []
        self._row = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = 0
        elif tag in ("td", "th") and self._row is not None:
            self._row += 1

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None
