"""docs/index.html and the HTML server pages in a real Chromium at 1280 px and 390 px wide,
driven with Playwright against the system Chromium.

Covered: the ranking on the first screen (a server row visible without scrolling) and no sideways
scroll at either width; ranked, failed and not-measured-here servers in three groups; search by
server or tool name; band filters with counts; sorting by column header and by the sort menu;
only informative columns (no trend column without two comparable points, none of "since <date>");
status chips; a failure's short reason with the full note behind a disclosure; names that wrap
only between their parts; readable band swatches; HTML server pages linked from the dashboard,
their per-tool chart summing to the headline; no console message at all. Screenshots of both
widths are written under the test's own temporary folder (path printed), and with
``REVIEW_SCREENSHOT=1`` the 1280 px one is also copied to ``docs/dashboard-screenshot.png``.

Chromium is required, never skipped: on Debian ``apt-get install -y chromium``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import struct
from pathlib import Path

import pytest

from harness.pages.regen import regen
from tests.conftest import REPO
from tests.pages import builders as b
from tests.pages import scenario

# Chromium: seconds of CPU per module; the full suite (CI) runs it, the fast loop leaves it out.
pytestmark = pytest.mark.slow

playwright = pytest.importorskip("playwright.sync_api", reason="the test extras install playwright")
WIDTHS = (1280, 390)
LONG_TOOL = "create_or_update_pull-request_reviewCommentThreadHTTPServer_payload"
INDIA_NOTE = ("no HTTP answer: ConnectionError: HTTPSConnectionPool(host='mcp.india.example', port=443): Max retries "
              "exceeded with url: /mcp (Caused by NameResolutionError(\"HTTPSConnection(host='mcp.india.example', "
              "port=443): Failed to resolve 'mcp.india.example' ([Errno -2] Name or service not known)\")) "
              "(phase: initialize)")
RANKED = ["charlie", "lima-long-names", "alpha", "kilo", "bravo"]
FAILED = ["delta", "echo", "foxtrot", "hotel", "india"]  # india: a remote that answered with an auth wall
MACHINE = ["golf", "juliet"]  # not-applicable here, not yet run


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The standard scenario, plus: an entry with long tool names, bravo down to one comparable
    point, and india failing with a raw exception chain as its note."""
    root = tmp_path_factory.mktemp("site") / "repo"
    root.mkdir()
    scenario.build(root)
    b.write_catalog(root, [*scenario.CATALOG, b.entry("lima-long-names")], reference="alpha")
    b.write_record(root, b.measured("lima-long-names", [b.tool(LONG_TOOL, "x" * 40), b.tool("small", "y")]))
    b.write_record(root, b.failed("india", "remote-auth-wall", [INDIA_NOTE, "failed the same way on retry 1"],
                                  launchCommand="https://mcp.india.example/mcp", headerNames=[]))
    history = (root / "history.csv").read_text(encoding="utf-8").splitlines()
    (root / "history.csv").write_text("\n".join(line for line in history if not line.startswith(("2026-08-03,bravo",
                                                                                                  "2026-08-10,bravo")))
                                      + "\n", encoding="utf-8")
    regen(root)
    return root


class Page:
    """A page at one width that records every console message and uncaught error."""

    def __init__(self, browser, path: Path, width: int, script: bool = True):
        height = 900 if width > 500 else 844
        self.context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=script)
        self.page = self.context.new_page()
        self.messages: list[str] = []
        self.page.on("console", lambda m: self.messages.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.messages.append(f"uncaught: {e}"))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")

    def names(self, visible_only: bool = True) -> list[str]:
        rows = self.page.locator("#leaderboard tbody tr")
        return [rows.nth(i).get_attribute("data-name") for i in range(rows.count())
                if not visible_only or rows.nth(i).is_visible()]

    def no_sideways_scroll(self) -> bool:
        return self.page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def open_page(browser, site):
    opened = []

    def open_(relative: str = "docs/index.html", width: int = 1280, script: bool = True) -> Page:
        page = Page(browser, site / relative, width, script)
        opened.append(page)
        return page

    yield open_
    for page in opened:
        assert page.messages == [], page.messages  # no console message, error or CSP report, ever
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_ranking_is_on_the_first_screen_and_nothing_scrolls_sideways(open_page, width, tmp_path):
    page = open_page(width=width)
    assert page.names() == RANKED
    assert page.no_sideways_scroll()
    first = page.page.locator("#leaderboard tbody tr").first.bounding_box()
    viewport = page.page.viewport_size["height"]
    assert first["y"] + first["height"] <= viewport, (first, viewport)  # a whole server row without scrolling
    assert page.page.locator("#filter-text").bounding_box()["y"] < viewport
    shot = tmp_path / f"dashboard-{width}.png"
    page.page.screenshot(path=str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">I", data[16:20])[0] == width
    print(f"\nscreenshot: {shot}")
    cards = page.page.evaluate("getComputedStyle(document.querySelector('#leaderboard tbody tr')).display")
    assert cards == ("grid" if width < 720 else "table-row")
    if width == 1280 and os.environ.get("REVIEW_SCREENSHOT") == "1":
        shutil.copyfile(shot, REPO / "docs" / "dashboard-screenshot.png")


def _group(page: Page, label: str) -> None:
    page.page.locator("#filter-group button", has_text=label).click()


@pytest.mark.parametrize("width", WIDTHS)
def test_failed_and_not_measured_here_are_kept_apart(open_page, width):
    page = open_page(width=width)
    counts = page.page.locator("#filter-group button").all_inner_texts()
    assert [" ".join(c.split()) for c in counts] == ["Ranked 5", "Failed 5", "Not measured here 2"]
    _group(page, "Failed")
    assert sorted(page.names()) == FAILED
    assert page.page.locator('#leaderboard thead th[data-key="status"]').count() == 1
    chip = page.page.locator('#leaderboard tr[data-name="echo"] .chip')
    assert chip.inner_text() == "startup-failure" and "g-failed" in chip.get_attribute("class")
    _group(page, "Not measured here")
    assert sorted(page.names()) == MACHINE
    assert "g-machine" in page.page.locator('#leaderboard tr[data-name="golf"] .chip').get_attribute("class")
    assert page.no_sideways_scroll()


def test_without_javascript_the_page_says_where_the_table_is(open_page):
    page = open_page(script=False)
    text = page.page.locator("noscript").first.evaluate("n => n.textContent")
    assert "leaderboard" in text and page.page.locator('a[href="../results/leaderboard.csv"]').count() >= 1


def test_sort_by_column_headers(open_page):
    page = open_page()
    keys = page.page.locator("#leaderboard thead th").evaluate_all("ths => ths.map(t => t.dataset.key)")
    assert keys == ["rank", "name", "tokens", "share", "band", "tools", "largest", "session", "trend"]
    tokens = page.page.locator('#leaderboard th[data-key="tokens"] button')
    tokens.click()  # a number sorts largest first
    assert page.page.locator('#leaderboard th[data-key="tokens"]').get_attribute("aria-sort") == "descending"
    assert page.names() == RANKED
    tokens.click()
    assert page.names()[0] == "bravo" and page.names()[-1] == "charlie"  # smallest first
    page.page.locator('#leaderboard th[data-key="name"] button').click()
    assert page.names() == sorted(RANKED)
    for key in keys:  # every column sorts and keeps every row
        page.page.locator(f'#leaderboard th[data-key="{key}"] button').click()
        assert page.page.locator(f'#leaderboard th[data-key="{key}"]').get_attribute("aria-sort")
        assert sorted(page.names()) == sorted(RANKED)


def test_sort_menu_on_a_narrow_screen(open_page):
    page = open_page(width=390)
    assert page.page.evaluate("document.querySelector('#leaderboard thead').getBoundingClientRect().width") <= 1
    page.page.select_option("#sort-key", "name:asc")
    assert page.names() == sorted(RANKED)
    page.page.select_option("#sort-key", "tokens:desc")
    assert page.names()[0] == "charlie"
    assert page.no_sideways_scroll()


@pytest.mark.parametrize("width", WIDTHS)
def test_search_by_server_or_tool_name_and_filter_by_band(open_page, width):
    page = open_page(width=width)
    box, summary = page.page.locator("#filter-text"), page.page.locator("#summary")
    box.fill("search_nodes")  # a tool name
    assert page.names() == ["alpha", "kilo"] and "Showing 2 of 2" in summary.inner_text()
    box.fill("BRA")  # a server name, any case
    assert page.names() == ["bravo"]
    box.fill("review")  # a part of a long tool name
    assert page.names() == ["lima-long-names"]
    box.fill("nothing-matches-this")
    assert page.names() == [] and summary.inner_text() == "No ranked server matches."
    box.fill("")
    bands = page.page.locator("#filter-band button").all_inner_texts()
    assert [" ".join(x.split()) for x in bands] == ["lean 5", "light 0", "moderate 0", "heavy 0", "very heavy 0"]
    page.page.locator('#filter-band button[data-band="light"]').click()
    assert page.names() == []
    page.page.locator('#filter-band button[data-band="light"]').click()  # again: off
    assert page.names() == RANKED
    assert page.no_sideways_scroll()


def test_only_columns_that_carry_information(open_page, site):
    page = open_page()
    assert page.page.locator('#leaderboard tr[data-name="alpha"] td.c-trend svg').count() == 1
    assert page.page.locator('#leaderboard tr[data-name="bravo"] td.c-trend').inner_text() == ""
    assert "since" not in page.page.locator("#leaderboard").inner_text()


def test_no_trend_column_without_two_comparable_points(browser, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    scenario.build(root)
    (root / "history.csv").write_text("date,server,tokens,toolCount,status,isolation\n", encoding="utf-8")
    regen(root)
    page = Page(browser, root / "docs/index.html", 1280)
    keys = page.page.locator("#leaderboard thead th").evaluate_all("ths => ths.map(t => t.dataset.key)")
    assert "trend" not in keys and "rank" in keys
    assert page.messages == []
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_failure_shows_its_short_reason_and_the_full_note_on_demand(open_page, width):
    page = open_page(width=width)
    _group(page, "Failed")
    cell = page.page.locator('#leaderboard tr[data-name="india"] td.c-why')
    assert cell.locator(".reason").inner_text() == "cannot resolve host mcp.india.example"
    full = cell.locator("details p")
    assert not full.is_visible()
    assert cell.bounding_box()["height"] < 80  # the raw exception text does not make the row tall
    cell.locator("summary").click()
    assert full.is_visible() and "NameResolutionError" in full.inner_text()
    assert "failed the same way on retry 1" in full.inner_text()
    assert page.no_sideways_scroll()


@pytest.mark.parametrize("width", WIDTHS)
def test_names_wrap_only_between_their_parts(open_page, width):
    page = open_page(width=width)
    cell = page.page.locator('#leaderboard tr[data-name="lima-long-names"] td.c-largest')
    assert cell.inner_text().replace("\n", "").startswith(LONG_TOOL)
    parts = cell.evaluate("""cell => Array.from(cell.childNodes).filter(n => n.nodeType === 3).map(n => {
        const range = document.createRange(); range.selectNodeContents(n);
        return [n.textContent, range.getClientRects().length]; })""")
    words = [text for text, _ in parts if text.strip()]
    assert words[:4] == ["create_", "or_", "update_", "pull-"]
    assert "review" in words and "Comment" in words and "HTTP" in words and "Server_" in words
    assert all(lines == 1 for text, lines in parts if " " not in text.strip()), parts  # no part split
    assert page.no_sideways_scroll()


def test_band_swatches_are_distinct_and_outlined(open_page):
    page = open_page()
    buttons = page.page.locator("#filter-band button")
    assert buttons.count() == 5
    background = _rgb(page.page.evaluate("getComputedStyle(document.body).backgroundColor"))
    swatches = []
    for i in range(5):
        style = buttons.nth(i).locator(".sw").evaluate(
            "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).borderTopColor]")
        swatches.append(_rgb(style[0]))
        assert _contrast(_rgb(style[1]), background) >= 3  # the outline stands out, whatever the fill
        assert _contrast(_rgb(buttons.nth(i).evaluate("e => getComputedStyle(e).color")), background) >= 4.5
    closest = min(sum((p - q) ** 2 for p, q in zip(_lab(a), _lab(c))) ** 0.5 for a, c in itertools.combinations(swatches, 2))
    assert closest >= 20, swatches  # neighbouring bands are told apart (CIE76 ΔE)


def _luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b_ = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b_


def _contrast(a, c) -> float:
    high, low = sorted((_luminance(a), _luminance(c)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _rgb(css: str) -> tuple[int, int, int]:
    return tuple(int(float(x)) for x in css[css.index("(") + 1: css.index(")")].split(",")[:3])


def _lab(rgb) -> tuple[float, float, float]:
    def lin(c):
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b_ = (lin(c) for c in rgb)
    x, y, z = (0.4124 * r + 0.3576 * g + 0.1805 * b_) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b_, \
        (0.0193 * r + 0.1192 * g + 0.9505 * b_) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_server_pages_are_html_and_linked(open_page, site):
    page = open_page()
    link = page.page.locator('#leaderboard tr[data-name="alpha"] td.c-name a')
    assert link.get_attribute("href") == "servers/alpha.html"
    link.click()
    page.page.wait_for_load_state("load")
    assert page.page.url.endswith("/docs/servers/alpha.html")
    assert page.page.locator("h1").inner_text() == "alpha"
    assert page.page.locator("table").count() >= 3
    bar = page.page.locator("figure.comp li.all .bar")
    parts = bar.locator("span").evaluate_all("s => s.map(x => Number(x.dataset.tokens))")
    assert sum(parts) == int(bar.get_attribute("data-total")) > 0  # the chart's parts sum to the headline
    assert page.page.evaluate("document.querySelector('img').naturalWidth") > 0  # the trend chart loads
    for width in WIDTHS:
        for name in ("alpha", "echo", "lima-long-names", "india"):
            other = open_page(f"docs/servers/{name}.html", width=width)
            assert other.no_sideways_scroll(), (name, width)
            assert other.page.locator("a", has_text="dashboard").get_attribute("href") == "../index.html"


# Every word of every table cell on a server page, outside <code>: [text, line boxes it occupies].
_CELL_WORDS = """() => {
  const out = [];
  for (const cell of document.querySelectorAll('main th, main td')) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (n.parentElement.closest('code')) continue;
      for (const m of n.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
        out.push([m[0], new Set(Array.from(range.getClientRects(), r => Math.round(r.top))).size]);
      }
    }
  }
  return out;
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_server_page_tables_wrap_words_only_between_their_parts(open_page, width):
    """A server page's tables (measurement, tools, history) never cut a word or a tool name in the
    middle at either width: names break at ``_``, ``-`` and case boundaries, headers between words
    ("tool names wrap mid-word"; found on the HTML server pages at 390 px)."""
    for name in ("lima-long-names", "alpha"):
        page = open_page(f"docs/servers/{name}.html", width=width)
        words = page.page.evaluate(_CELL_WORDS)
        assert len(words) > 40, words
        assert [w for w in words if w[1] != 1] == [], (name, width)
        if name == "lima-long-names":
            tools = page.page.locator("td", has_text="create_").first
            assert tools.inner_text().replace("\n", "") == LONG_TOOL
        assert page.no_sideways_scroll()


def test_the_console_check_is_not_vacuous(browser, tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"script-src "
                   "'sha256-AAAA'\"></head><body><script>console.error('boom')</script></body></html>", encoding="utf-8")
    page = Page(browser, bad, 1400)
    assert any("Content Security Policy" in m or "Content-Security-Policy" in m for m in page.messages), page.messages
    page.close()
    worse = tmp_path / "worse.html"
    worse.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); missing();</script></body></html>",
                     encoding="utf-8")
    page = Page(browser, worse, 390)
    assert any("boom" in m for m in page.messages) and any(m.startswith("uncaught:") for m in page.messages)
    page.close()


@pytest.mark.slow
def test_every_server_page_chart_sums_to_its_headline(open_page, site):
    """Per tool and for the whole server, the chart's segments add up exactly to the number shown."""
    checked = 0
    for path in sorted((site / "docs/servers").glob("*.html")):
        page = open_page(f"docs/servers/{path.name}")
        bars = page.page.locator("figure.comp .bar")
        sums = bars.evaluate_all("""bars => bars.map(b => [Number(b.dataset.total),
            Array.from(b.children).reduce((n, s) => n + Number(s.dataset.tokens), 0)])""")
        assert all(total == parts for total, parts in sums), (path.name, sums)
        if sums:
            headline = page.page.locator("h1 + p strong").first.inner_text()
            assert int(headline.split()[0].replace(",", "")) == sums[0][0]
            checked += 1
    assert checked >= 4
