"""docs/calculator.html in a real Chromium: the totals it computes in the browser from the published
records equal what ``mcp-context-cost audit --json`` reports for the same configs.

The configs name catalog servers of this repository; each entry launches the fixture server
``tool_list.py`` answering ``tools/list`` with that server's published ``rawToolsCapture`` byte for
byte, so the audit measures exactly what is published. One audit reads all four client files
(Claude Code ``.mcp.json``, Claude Desktop, Cursor, VS Code) and reports a session per client; the
page is given each file pasted, with its client picked, and must show the same total and floor.
An entry that fails to start (audit: no number) and an entry naming no catalog server
(calculator: no number) make both a floor. Also: picking servers from the catalog, a config that
is not JSON, no sideways scroll at 1280 and 390 px, and no console message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.db.catalog import load_catalog
from harness.pages import calculator
from harness.pages.board import build_rows
from harness.pages.published_records import load_records
from tests.audit.conftest import report_of, run_audit
from tests.conftest import FIXTURE_SERVERS, REPO
from tests.pages.test_dashboard_chromium import Page

# Chromium: seconds of CPU per module; the full suite (CI) runs it, the fast loop leaves it out.
pytestmark = pytest.mark.slow

playwright = pytest.importorskip("playwright.sync_api", reason="the test extras install playwright")
SERVERS = ("filesystem", "memory", "fetch", "time", "sqlite", "sequential-thinking")


def _record(name: str) -> dict:
    return json.loads((REPO / "results" / name / "measurement.json").read_text(encoding="utf-8"))


def _serving(name: str) -> dict:
    """An entry launching the fixture server with ``name``'s published capture."""
    capture = json.dumps(_record(name)["rawToolsCapture"], ensure_ascii=False)
    return {"command": sys.executable, "args": [str(FIXTURE_SERVERS / "tool_list.py"), "--tools-json", capture]}


BROKEN = {"command": sys.executable, "args": [str(FIXTURE_SERVERS / "tool_list.py"), "--fail"]}
CONFIGS = {  # client → (where it lives under home/ or project/, the document)
    "claude-code": ("project/.mcp.json", {"mcpServers": {"filesystem": _serving("filesystem"),
                                                         "memory": _serving("memory"), "my-own-tool": BROKEN}}),
    "claude-desktop": ("home/.config/Claude/claude_desktop_config.json",
                       {"mcpServers": {"fetch": _serving("fetch"), "time": _serving("time")}}),
    "cursor": ("project/.cursor/mcp.json", {"mcpServers": {"sqlite": _serving("sqlite"),
                                                           "filesystem": _serving("filesystem")}}),
    "vscode": ("project/.vscode/mcp.json", {"servers": {"sequential-thinking": {"type": "stdio",
                                                                                **_serving("sequential-thinking")},
                                                        "memory": {"type": "stdio", **_serving("memory")}}}),
}


@pytest.fixture(scope="module")
def calculator_page(tmp_path_factory) -> Path:
    catalog = load_catalog(REPO / "servers.yaml")
    rows = build_rows(catalog, load_records(REPO / "results", [e.name for e in catalog.entries]))
    page = tmp_path_factory.mktemp("site") / "docs" / "calculator.html"
    page.parent.mkdir()
    page.write_text(calculator.render(rows), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("machine")
    for where, document in CONFIGS.values():
        path = root / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    done = run_audit(["--single", "--json", "--trust-project"], root / "project", root / "home")
    report = report_of(done.stdout)
    return {s["client"]: s for s in report["sessions"]}


def _open(browser, page_path: Path, width: int = 1280) -> Page:
    return Page(browser, page_path, width)


def _paste(page: Page, client: str, document: dict) -> dict[str, tuple[int, bool]]:
    page.page.click("#tab-paste")
    page.page.select_option("#client", client)
    page.page.fill("#config", json.dumps(document, indent=2))
    cells = page.page.locator("#totals tr td[data-tokens]")
    out = {}
    for i in range(cells.count()):
        cell = cells.nth(i)
        key = cell.evaluate("td => td.parentElement.dataset.client + ':' + td.dataset.label")
        out[key] = (int(cell.get_attribute("data-tokens")), cell.get_attribute("data-floor") == "true")
    return out


@pytest.mark.parametrize("client", sorted(CONFIGS))
def test_calculator_totals_equal_the_audit(browser, calculator_page, audited, client):
    session = audited[client]
    assert session["total"] is not None, session
    expected = (session["total"]["tokens"], session["total"]["floor"])
    page = _open(browser, calculator_page)
    shown = _paste(page, client, CONFIGS[client][1])
    assert shown[f"{client}:Every request"] == expected, (shown, session["total"])
    if client == "claude-desktop":  # paid in full: up front is the whole total
        assert shown["claude-desktop:Up front"] == expected
    assert page.page.locator("#config-problem").inner_text() == ""
    assert page.messages == []
    page.close()


def test_a_floor_names_what_has_no_number(browser, calculator_page, audited):
    assert audited["claude-code"]["total"]["floor"] is True
    assert audited["claude-code"]["total"]["unmeasured"] == ["my-own-tool"]
    page = _open(browser, calculator_page)
    _paste(page, "claude-code", CONFIGS["claude-code"][1])
    assert page.page.locator("#explain").inner_text() == "≥ marks a floor: no published number for my-own-tool."
    cell = page.page.locator('#totals tr[data-client="claude-code"] td[data-label="Every request"] b')
    assert cell.inner_text().startswith("≥ ")
    page.close()


def test_deferring_claude_code_loads_names_up_front(browser, calculator_page):
    page = _open(browser, calculator_page)
    shown = _paste(page, "claude-code", {"mcpServers": {"filesystem": _serving("filesystem")}})
    total = _record("filesystem")["totalTokens"]
    assert shown["claude-code:Every request"] == (total, False)
    assert 0 < shown["claude-code:Up front"][0] < total  # tool names and instructions only
    page.page.select_option("#posture", label="ENABLE_TOOL_SEARCH=false")
    up = page.page.locator('#totals tr[data-client="claude-code"] td[data-label="Up front"]')
    assert int(up.get_attribute("data-tokens")) == total
    page.close()


@pytest.mark.parametrize("width", (1280, 390))
def test_pick_servers_and_no_sideways_scroll(browser, calculator_page, width, tmp_path):
    page = _open(browser, calculator_page, width)
    for name in ("filesystem", "memory"):
        page.page.fill("#find", name)
        # the entry named exactly so: other names and packages contain "memory" too
        page.page.locator("#catalog label", has=page.page.locator(f"span:text-is('{name}')")).locator("input").check()
    total = _record("filesystem")["totalTokens"] + _record("memory")["totalTokens"]
    every = page.page.locator('#totals tr[data-client="claude-desktop"] td[data-label="Every request"]')
    assert int(every.get_attribute("data-tokens")) == total
    assert page.page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.page.screenshot(path=str(tmp_path / f"calculator-{width}.png"), full_page=True)
    print(f"\nscreenshot: {tmp_path / f'calculator-{width}.png'}")
    assert page.messages == []
    page.close()


def test_a_config_that_is_not_json_says_so(browser, calculator_page):
    page = _open(browser, calculator_page)
    page.page.click("#tab-paste")
    page.page.fill("#config", "{\"mcpServers\": {")
    assert page.page.locator("#config-problem").inner_text().startswith("Cannot read this config: not JSON")
    page.page.fill("#config", '{"servers": {}}')  # VS Code's key, with Claude Code picked
    assert "this file has servers: pick the client it is for" in page.page.locator("#config-problem").inner_text()
    assert page.messages == []
    page.close()


def _pasted(page: Page, text: str, client: str = "claude-code") -> dict:
    page.page.click("#tab-paste")
    page.page.select_option("#client", client)
    page.page.evaluate("t => { const c = document.getElementById('config'); c.value = t; "
                       "c.dispatchEvent(new Event('input')); }", text)
    return page.page.evaluate("""() => ({
        problem: document.getElementById('config-problem').textContent,
        rows: Array.from(document.querySelectorAll('#servers tbody tr')).map(r => r.innerText.replace(/\\s+/g, ' ').trim()),
        desktop: Number(document.querySelector('#totals tr[data-client="claude-desktop"] td[data-tokens]')
                        ?.dataset.tokens ?? -1),
        flag: window.PWNED === undefined ? null : String(window.PWNED),
        polluted: Object.keys(Object.prototype).concat(Object.keys(Array.prototype))})""")


@pytest.mark.parametrize("names", [("constructor", "__proto__", "toString"), ("hasOwnProperty", "valueOf", "isPrototypeOf")])
def test_prototype_names_match_no_server(browser, calculator_page, names):
    page = _open(browser, calculator_page)
    config = ('{"mcpServers": {' + ", ".join(f'"{n}": {{"command": "{n}", "args": ["{n}@1"]}}' for n in names)
              + ', "remote": {"url": "__proto__"}, "typed": {"type": "toString", "command": "npx", "args": '
              '["-y", "@modelcontextprotocol/server-memory"]}}}')
    seen = _pasted(page, config)
    assert seen["rows"] == [f"{n} not in the catalog — —" for n in names] + [
        "remote not in the catalog — —", "typed unknown transport toString — —"]
    assert seen["desktop"] == 0 and seen["polluted"] == [] and seen["flag"] is None
    assert page.messages == []
    page.close()


def test_pasted_text_shows_as_text(browser, calculator_page):
    page = _open(browser, calculator_page)
    config = json.dumps({"mcpServers": {'<img src=x onerror="window.PWNED=1">': {"command": "x"},
                                        "bidi \u202egnp.exe\u202c \u2028line": {"url": "javascript:window.PWNED=2"},
                                        "n" * 5000: {"command": "x"}}})
    seen = _pasted(page, config)
    assert seen["rows"][0] == '<img src=x onerror="window.PWNED=1"> not in the catalog — —'
    assert seen["rows"][1] == "bidi \\u202egnp.exe\\u202c \\u2028line not in the catalog — —"
    assert seen["rows"][2].startswith("n" * 119 + "… not in")
    assert seen["flag"] is None and page.messages == []
    page.close()


def test_comments_and_trailing_commas_only_outside_strings(browser, calculator_page):
    page = _open(browser, calculator_page)
    config = ('{"mcpServers": {\n  // a comment\n  "memory": {"command": "npx", "args": ["-y", '
              '"@modelcontextprotocol/server-memory",],},\n  "a,}": {"command": "/* not a comment */ x"},\n'
              '  "b,]": {"command": "// nor this"}, /* trailing */\n}}')
    seen = _pasted(page, config)
    assert seen["problem"] == ""
    assert seen["rows"] == ["memory 2,378 34", "a,} not in the catalog — —", "b,] not in the catalog — —"]
    page.close()


@pytest.mark.slow
def test_a_config_is_read_within_the_audits_bounds(browser, calculator_page):
    from harness.audit import readers

    page = _open(browser, calculator_page)
    pad = " " * readers.MAX_CONFIG_BYTES
    assert _pasted(page, '{"mcpServers": {}}' + pad)["problem"].endswith("bytes, the most audit reads")
    jsonc = '{"mcpServers": {"memory": {"command": "x"},}}' + " " * readers.MAX_JSON5_BYTES
    assert "comments and trailing commas are read up to" in _pasted(page, jsonc)["problem"]
    many = {"mcpServers": {f"s{i}": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
                           for i in range(2000)}}
    seen = _pasted(page, json.dumps(many))
    assert seen["desktop"] == 2000 * _record("memory")["totalTokens"]  # every entry counted
    assert len(seen["rows"]) == 501 and seen["rows"][-1] == "and 1,500 more entries, counted in the totals above"
    assert page.messages == []
    page.close()
