"""docs/index.html and the HTML server pages in a real Chromium at 1400 px and 390 px wide
(issue #5, 5; issue #15, "The dashboard"), driven with Playwright against the system Chromium.

Covered: one leaderboard row per catalog entry in published order, complete without JavaScript;
sorting by column headers (and the "sort by" menu on narrow screens); filtering by server name,
tool name and status; a one-point trend reading "since <date>"; a failure's short reason with the
full note behind a disclosure; names that wrap only between their parts; readable bands (distinct
outlined swatches, readable labels) and the distribution chart; the "how to read this" line; HTML
server pages linked from the dashboard; no horizontal scroll at 390 px; no console message at all.
Screenshots of both widths are written under the test's own temporary folder (path printed), and
with ``REVIEW_SCREENSHOT=1`` the 1400 px one is also copied to ``docs/dashboard-screenshot.png``.

Chromium is required, never skipped: on Debian ``apt-get install -y chromium``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import struct
from pathlib import Path

import pytest

from harness.publish.regen import regen
from tests.conftest import REPO
from tests.publish import builders as b
from tests.publish import scenario

playwright = pytest.importorskip("playwright.sync_api", reason="the test extras install playwright")
WIDTHS = (1400, 390)
LONG_TOOL = "create_or_update_pull-request_reviewCommentThreadHTTPServer_payload"
INDIA_NOTE = ("no HTTP answer: ConnectionError: HTTPSConnectionPool(host='mcp.india.example', port=443): Max retries "
              "exceeded with url: /mcp (Caused by NameResolutionError(\"HTTPSConnection(host='mcp.india.example', "
              "port=443): Failed to resolve 'mcp.india.example' ([Errno -2] Name or service not known)\")) "
              "(phase: initialize)")
ORDER = ["charlie", "lima-long-names", "alpha", "kilo", "bravo", "delta", "echo", "foxtrot", "golf", "hotel",
         "india", "juliet"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("chromium is not installed; the dashboard test needs it "
                    "(Debian/Ubuntu: apt-get update && apt-get install -y chromium)")
    return found


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


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


class Page:
    """A page at one width that records every console message and uncaught error."""

    def __init__(self, browser, path: Path, width: int, script: bool = True):
        self.context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=script)
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

    def open_(relative: str = "docs/index.html", width: int = 1400, script: bool = True) -> Page:
        page = Page(browser, site / relative, width, script)
        opened.append(page)
        return page

    yield open_
    for page in opened:
        assert page.messages == [], page.messages  # no console message, error or CSP report, ever
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_layout_and_screenshot(open_page, width, tmp_path):
    page = open_page(width=width)
    assert page.names() == ORDER
    assert page.no_sideways_scroll()
    assert page.page.locator("#how-to-read").is_visible()
    assert "How to read this" in page.page.locator("#how-to-read").inner_text()
    shot = tmp_path / f"dashboard-{width}.png"
    page.page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">I", data[16:20])[0] == width
    assert len(data) > 40_000  # not a blank page
    print(f"\nscreenshot: {shot}")
    cards = page.page.evaluate("getComputedStyle(document.querySelector('#leaderboard tbody tr')).display")
    assert cards == ("grid" if width < 720 else "table-row")
    if width == 1400 and os.environ.get("REVIEW_SCREENSHOT") == "1":
        shutil.copyfile(shot, REPO / "docs" / "dashboard-screenshot.png")


def test_complete_and_readable_without_javascript(open_page):
    page = open_page(script=False)
    assert page.names() == ORDER
    assert not page.page.locator("#controls").is_visible()
    assert page.page.locator("#leaderboard th button").count() == 0
    assert page.page.locator("#leaderboard svg").count() >= 3  # sparklines are inline pictures
    assert page.page.locator("#leaderboard details").count() >= 2


def test_sort_by_any_column_header(open_page):
    page = open_page()
    header = page.page.locator("#leaderboard th button")
    assert header.count() == 10
    tokens = page.page.locator('#leaderboard th[data-key="tokens"] button')
    tokens.click()  # a number sorts largest first
    assert page.page.locator('#leaderboard th[data-key="tokens"]').get_attribute("aria-sort") == "descending"
    assert page.names()[:5] == ["charlie", "lima-long-names", "alpha", "kilo", "bravo"]
    assert set(page.names()[5:]) == set(ORDER) - set(page.names()[:5])  # no number: always last
    tokens.click()
    assert page.names()[:5] == ["bravo", "alpha", "kilo", "lima-long-names", "charlie"]
    page.page.locator('#leaderboard th[data-key="name"] button').click()
    assert page.names() == sorted(ORDER)
    page.page.locator('#leaderboard th[data-key="status"] button').click()
    statuses = [page.page.locator(f'#leaderboard tr[data-name="{n}"]').get_attribute("data-status")
                for n in page.names()]
    assert statuses == sorted(statuses)
    for key in ("rank", "tools", "largest", "session", "band", "trend", "note"):  # every column sorts
        page.page.locator(f'#leaderboard th[data-key="{key}"] button').click()
        assert page.page.locator(f'#leaderboard th[data-key="{key}"]').get_attribute("aria-sort")
        assert sorted(page.names()) == sorted(ORDER)


def test_sort_menu_on_a_narrow_screen(open_page):
    page = open_page(width=390)
    assert not page.page.locator("#leaderboard thead").is_visible() or \
        page.page.evaluate("document.querySelector('#leaderboard thead').getBoundingClientRect().width") <= 1
    page.page.select_option("#sort-key", "1:asc")  # Server, ascending
    assert page.names() == sorted(ORDER)
    page.page.select_option("#sort-key", "3:desc")  # Tokens, largest first
    assert page.names()[0] == "charlie"
    assert page.no_sideways_scroll()


@pytest.mark.parametrize("width", WIDTHS)
def test_filter_by_name_tool_and_status(open_page, width):
    page = open_page(width=width)
    box, status, count = page.page.locator("#filter-text"), page.page.locator("#filter-status"), page.page.locator("#filter-count")
    assert count.inner_text() == f"showing {len(ORDER)} of {len(ORDER)}"
    box.fill("search_nodes")  # a tool name
    assert page.names() == ["alpha", "kilo"] and count.inner_text() == f"showing 2 of {len(ORDER)}"
    box.fill("BRA")  # a server name, any case
    assert page.names() == ["bravo"]
    box.fill("")
    status.select_option("timeout")
    assert page.names() == ["foxtrot"]
    status.select_option("measured")
    box.fill("review")  # a part of a long tool name
    assert page.names() == ["lima-long-names"]
    box.fill("nothing-matches-this")
    assert page.names() == [] and count.inner_text() == f"showing 0 of {len(ORDER)}"
    box.fill("")
    status.select_option("")
    assert page.names() == ORDER
    assert page.no_sideways_scroll()


def test_one_point_trend_reads_since_its_date(open_page):
    page = open_page()
    bravo = page.page.locator('#leaderboard tr[data-name="bravo"] td.c-trend')
    assert bravo.inner_text() == "since 2026-11-16" and bravo.locator("svg").count() == 0
    assert page.page.locator('#leaderboard tr[data-name="alpha"] td.c-trend svg').count() == 1
    assert page.page.locator('#leaderboard tr[data-name="juliet"] td.c-trend').inner_text() == ""


@pytest.mark.parametrize("width", WIDTHS)
def test_failure_shows_its_short_reason_and_the_full_note_on_demand(open_page, width):
    page = open_page(width=width)
    cell = page.page.locator('#leaderboard tr[data-name="india"] td.c-note')
    assert cell.locator(".reason").inner_text() == "cannot resolve host mcp.india.example"
    full = cell.locator("details p")
    assert not full.is_visible()
    height = cell.bounding_box()["height"]
    assert height < 80  # the raw exception text does not make the row tall
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


def test_bands_are_readable_and_the_distribution_counts_measured_servers(open_page, site):
    page = open_page()
    labels = page.page.locator("#distribution .label")
    assert labels.count() == 5
    swatches, background = [], _rgb(page.page.evaluate("getComputedStyle(document.body).backgroundColor"))
    for i in range(5):
        label = labels.nth(i)
        style = label.locator(".sw").evaluate("e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).borderTopColor]")
        swatches.append(_rgb(style[0]))
        assert _contrast(_rgb(style[1]), background) >= 3  # the outline stands out, whatever the fill
        assert _contrast(_rgb(label.evaluate("e => getComputedStyle(e).color")), background) >= 4.5
    assert [labels.nth(i).inner_text().split("\n")[0] for i in range(5)] == ["lean", "light", "moderate", "heavy",
                                                                             "very heavy"]
    closest = min(sum((p - q) ** 2 for p, q in zip(_lab(a), _lab(c))) ** 0.5 for a, c in itertools.combinations(swatches, 2))
    assert closest >= 20, swatches  # neighbouring bands are told apart (CIE76 ΔE)
    counts = [int(x) for x in page.page.locator("#distribution .count").all_inner_texts()]
    assert counts == [5, 0, 0, 0, 0]  # five measured servers, all lean
    assert (site / "badges").exists() is False or all('"color"' in p.read_text() for p in (site / "badges").glob("*.json"))


def test_server_pages_are_html_and_linked(open_page, site):
    page = open_page()
    link = page.page.locator('#leaderboard tr[data-name="alpha"] td.c-name a')
    assert link.get_attribute("href") == "servers/alpha.html"
    link.click()
    page.page.wait_for_load_state("load")
    assert page.page.url.endswith("/docs/servers/alpha.html")
    assert page.page.locator("h1").inner_text() == "alpha"
    assert page.page.locator("table").count() >= 3
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
    (issue #15, "tool names wrap mid-word"; found on the HTML server pages at 390 px)."""
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
