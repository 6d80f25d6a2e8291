"""HTML server pages (harness/pages/server_html.py) and the dashboard's HTML text helpers
(harness/pages/text.py): the HTML is the Markdown page rendered, so a section
added to the Markdown appears in the HTML; nothing but ``<br>`` passes as raw HTML; links to
sibling server pages point at their HTML; names get break opportunities, reasons stay short."""

from __future__ import annotations

import html

import pytest

from harness.pages import server_html
from harness.pages.text import breakable, shorten
from harness.pages.regen import render_all
from tests.pages import builders as b


@pytest.mark.parametrize("name, expected", [
    ("search_nodes", "search_<wbr>nodes"),
    ("create-or-update", "create-<wbr>or-<wbr>update"),
    ("listIssues", "list<wbr>Issues"),
    ("HTTPServer_v2", "HTTP<wbr>Server_<wbr>v2"),
    ("get2FACodes", "get2<wbr>FA<wbr>Codes"),
    ("a.b/c:d", "a.<wbr>b/<wbr>c:<wbr>d"),
    ("plain", "plain"),
    ("<b>_x", "&lt;b&gt;_<wbr>x"),
    ("trailing_", "trailing_"),
])
def test_breakable_names(name, expected):
    assert breakable(name) == expected


def test_breakable_is_one_line_and_bounded():
    assert breakable("two\nlines") == "two lines"
    assert len(breakable("n" * 10_000, 80)) == 80


@pytest.mark.parametrize("limit", [20, 40, 90])
def test_shorten_cuts_between_words(limit):
    text = "exited with code 1 during initialize; failed the same way on retry 1 (retried: startup-failure)"
    short = shorten(text, limit)
    assert len(short) <= limit and short.endswith("…")
    assert text.startswith(short[:-1])
    assert text[len(short) - 1] in " ,;:(" or short[:-1].endswith(tuple(text.split()))


def test_sections_of_the_markdown_page_carry_over(published):
    root, _, _ = published
    outputs = render_all(root)
    page = outputs["docs/servers/alpha.html"]
    markdown = outputs["docs/servers/alpha.md"]
    for heading in (line[3:] for line in markdown.splitlines() if line.startswith("## ")):
        assert f"<h2>{heading}</h2>" in page, heading
    extra = markdown + "\n## Cost movement\n\n| From | To |\n|---|---|\n| 1 | 2 |\n"
    rendered = server_html.render("alpha", extra)
    assert "<h2>Cost movement</h2>" in rendered and '<div class="wide"><table>' in rendered
    assert server_html.render("alpha", extra) == rendered  # deterministic


def test_raw_html_other_than_br_is_shown_as_text():
    markdown = ("# x\n\n<script>alert(1)</script>\n\ntext <img src=x onerror=alert(1)> and <b>bold</b>\n\n"
                "> line one<br>\n> line two<br />\n\n[bad](javascript:alert(1)) [ok](https://example.com)\n")
    page = server_html.render("x", markdown)
    body = page.split("<main>", 1)[1]
    assert "<script" not in body and "<img" not in body and "<b>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert body.count("<br>") == 2
    assert 'href="javascript:' not in body and 'href="https://example.com"' in body
    assert "script-src" not in page and "default-src 'none'" in html.unescape(page)  # no script may run


@pytest.mark.parametrize("href, expected", [
    ("other.md", "other.html"),
    ("./other.md", "./other.html"),
    ("../servers/other.md", "../servers/other.html"),
    ("../METHODOLOGY.md", "../METHODOLOGY.md"),
    ("../../results/leaderboard.md", "../../results/leaderboard.md"),
    ("../index.html", "../index.html"),
    ("https://example.com/a.md", "https://example.com/a.md"),
    ("#notes", "#notes"),
])
def test_links_to_server_pages_point_at_their_html(href, expected):
    page = server_html.render("alpha", f"[link]({href})\n")
    assert f'href="{expected}"' in page


def test_every_markdown_server_page_has_its_html(published):
    root, _, _ = published
    outputs = render_all(root)
    markdown = {p for p in outputs if p.startswith("docs/servers/") and p.endswith(".md")}
    assert {p[:-3] + ".html" for p in markdown} == {p for p in outputs if p.endswith(".html") and "servers/" in p}
    assert {r["name"]: r["href"] for r in b.dashboard_rows(outputs["docs/index.html"])}["alpha"] == "servers/alpha.html"
