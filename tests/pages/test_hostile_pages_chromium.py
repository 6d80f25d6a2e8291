"""Hostile recorded text reaching the published pages, loaded in a real Chromium: nothing runs and
nothing is requested.

Every untrusted field a page shows — tool names and descriptions, serverInfo name and version,
instructions, the launch command, a failure's notes and stderr, and a catalog entry's category,
package, repository and notes — carries payloads that would set ``window.PWNED`` or load an image
from another origin if any of them became markup: ``</script>``, ``<!--``, ``<img onerror>``,
``<svg onload>``, ``javascript:`` URLs, U+2028/U+2029 inside the embedded JSON, bidi overrides,
lone surrogates, prototype-named tools (``constructor``, ``__proto__``) and a multi-megabyte
description. The dashboard, the calculator and every server page are opened at 1280 and 390 px;
the flag stays unset, no request leaves the page's own files, no console message appears, no link
has a script URL, and nothing scrolls sideways. A scratch page holding the same payload raw proves
the checks can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.pages.regen import regen
from tests.pages import builders as b
from tests.pages.test_dashboard_chromium import WIDTHS

# Chromium: seconds of CPU per module; the full suite (CI) runs it, the fast loop leaves it out.
pytestmark = pytest.mark.slow

playwright = pytest.importorskip("playwright.sync_api", reason="the test extras install playwright")
BEACON = "https://beacon.invalid/hit.png"


def payload(tag: str) -> str:
    """Markup that sets ``window.PWNED`` to ``tag`` (and requests the beacon) wherever it is parsed."""
    return (f'</script><script>window.PWNED="{tag}"</script><!--<img src="{BEACON}?{tag}" '
            f'onerror="window.PWNED=\'{tag}\'"><svg onload="window.PWNED=\'{tag}\'">\u2028\u2029')


JS_URL = "javascript:window.PWNED='url'"
PACKAGE = "</script><img src=x onerror=window.PWNED=3>_a*b`c`\\_&lt;"  # Markdown and HTML both
TOOLS = [
    b.tool(payload("tool-name"), payload("tool-description")),
    b.tool(JS_URL, JS_URL),
    b.tool("<!--<script>", "-->\u2028</script>\u2029"),
    b.tool("bidi \u202egnp.exe\u202c \u2066x\u2069", "lone \ud800 surrogate"),
    b.tool("constructor", "toString"),
    b.tool("__proto__", "hasOwnProperty"),
    b.tool("big", "A" * 3_000_000),
]


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile") / "repo"
    root.mkdir()
    b.write_catalog(root, [
        b.entry("evil", category='<img src=x onerror="window.PWNED=1">', package=PACKAGE,
                repo=f'https://x.example/"onmouseover="window.PWNED=2"<img/src="{BEACON}">', notes=payload("notes") + JS_URL),
        b.entry("evil-fail", category="</script><!--", notes=payload("failure-notes")),
        b.entry("constructor", category="toString"),
        b.entry("plain"),
    ])
    b.write_record(root, b.measured("evil", TOOLS, serverName=payload("server-name"), serverVersion=JS_URL,
                                    serverInstructions=payload("instructions"), launchCommand="npx -y " + payload("cmd")))
    b.write_record(root, b.failed("evil-fail", "startup-failure", [payload("note"), JS_URL], stderrTail=payload("stderr")))
    b.write_record(root, b.measured("constructor", [b.tool("a", "b")]))
    b.write_record(root, b.measured("plain", [b.tool("toString", "b")]))
    regen(root)
    return root


def _visit(browser, path: Path, width: int) -> dict:
    """Open ``path``, hover every link and return what the page did."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    requests, messages = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"uncaught: {e}"))
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    links = page.locator("a")
    for i in range(min(links.count(), 200)):
        if links.nth(i).is_visible():
            links.nth(i).hover()
    page.wait_for_timeout(100)
    seen = {
        "flag": page.evaluate("window.PWNED === undefined ? null : String(window.PWNED)"),
        "script_links": page.evaluate("Array.from(document.querySelectorAll('[href],[src]')).map(e => "
                                      "e.getAttribute('href') || e.getAttribute('src'))"
                                      ".filter(h => /^\\s*(javascript|data|vbscript):/i.test(h))"),
        "sideways": page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth"),
        "text": page.inner_text("body"),
        "requests": requests, "messages": messages,
    }
    context.close()
    return seen


def _own_files(site: Path, urls: list[str]) -> list[str]:
    """``urls`` that are not files of the published site itself."""
    docs = (site / "docs").resolve().as_uri()
    return [u for u in urls if not u.startswith(docs + "/")]


# Each width visits every page: the widest in the fast loop, both in the full suite.
@pytest.mark.parametrize("width", [WIDTHS[0], *(pytest.param(w, marks=pytest.mark.slow) for w in WIDTHS[1:])])
def test_hostile_text_runs_nothing_and_requests_nothing(browser, hostile_site, width):
    pages = [hostile_site / "docs" / "index.html", hostile_site / "docs" / "calculator.html",
             *sorted((hostile_site / "docs" / "servers").glob("*.html"))]
    assert len(pages) == 6
    for path in pages:
        seen = _visit(browser, path, width)
        assert seen["flag"] is None, (path.name, seen["flag"])
        assert _own_files(hostile_site, seen["requests"]) == [], (path.name, seen["requests"])
        assert seen["messages"] == [], (path.name, seen["messages"])
        assert seen["script_links"] == [], (path.name, seen["script_links"])
        assert not seen["sideways"], path.name


def test_hostile_catalog_text_reads_as_written(browser, hostile_site):
    seen = _visit(browser, hostile_site / "docs" / "servers" / "evil.html", 1280)
    lines = seen["text"].splitlines()
    # what the catalog holds, shown as its characters: no Markdown escape or entity left visible
    assert "Package: " + PACKAGE in lines
    assert 'Category: <img src=x onerror="window.PWNED=1">' in lines
    assert "\\u202e" in seen["text"] and "\u202e" not in seen["text"]


def test_the_checks_can_fail(browser, tmp_path):
    raw = tmp_path / "docs" / "raw.html"
    raw.parent.mkdir()
    # the payload's own <img> sits after its unclosed "<!--": the beacon and the link go first
    raw.write_text(f"<!DOCTYPE html><a href=\"{JS_URL}\">x</a><img src=\"{BEACON}\"><p>{payload('raw')}</p>",
                   encoding="utf-8")
    seen = _visit(browser, raw, 1280)
    assert seen["flag"] == "raw"
    assert any(u.startswith(BEACON) for u in _own_files(tmp_path, seen["requests"]))
    assert seen["script_links"] == [JS_URL]
