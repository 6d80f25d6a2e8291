"""docs/index.html opened in headless Chromium: it renders, has one leaderboard row per catalog
entry, runs no script and logs no console message (issue #5, 5).

Chromium is required, never skipped: on Debian ``apt-get install -y chromium``. With
``REVIEW_SCREENSHOT=1`` the screenshot is also copied to ``docs/dashboard-screenshot.png``.
"""

from __future__ import annotations

import html.parser
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.publish import scenario

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("chromium is not installed; the dashboard test needs it "
                    "(Debian/Ubuntu: apt-get update && apt-get install -y chromium)")
    return found


def browse(page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    argv = [chromium(), *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
            *extra, page.resolve().as_uri()]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


class Board(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows: list[str] = []
        self.scripts = 0
        self._in_board = self._in_body = False
        self._row_link = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "table" and attrs.get("id") == "leaderboard":
            self._in_board = True
        if self._in_board and tag == "tbody":
            self._in_body = True
        if self._in_body and tag == "tr":
            self._row_link = ""
        if self._in_body and tag == "a" and self._row_link == "":
            self._row_link = attrs.get("href", "")
            self.rows.append(self._row_link)

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_board = self._in_body = False


@pytest.fixture
def dashboard(published) -> Path:
    root, _, _ = published
    return root / "docs/index.html"


def test_screenshot(dashboard, tmp_path):
    shot = tmp_path / "dashboard.png"
    done = browse(dashboard, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000")
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 2000)
    assert len(data) > 20_000  # not a blank page
    assert console_lines(done.stderr) == []
    if os.environ.get("REVIEW_SCREENSHOT") == "1":
        shutil.copyfile(shot, REPO / "docs" / "dashboard-screenshot.png")


def test_dom_has_one_row_per_entry_and_no_script(dashboard, tmp_path):
    done = browse(dashboard, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    board = Board()
    board.feed(done.stdout)
    expected = ["charlie", "alpha", "kilo", "bravo", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    assert sorted(expected) == sorted(e["name"] for e in scenario.CATALOG)
    assert board.rows == [f"servers/{name}.md" for name in expected]
    assert board.scripts == 0
    assert 'id="bands"' in done.stdout and 'id="status-counts"' in done.stdout
    assert done.stdout.count("<svg") >= 4  # inline sparklines
    assert console_lines(done.stderr) == []


def test_page_makes_no_external_reference(dashboard):
    text = dashboard.read_text(encoding="utf-8")
    assert " src=" not in text and "<link" not in text and "<script" not in text and "@import" not in text
    assert "default-src 'none'" in text
    hrefs = [part.split('"', 1)[0] for part in text.split('href="')[1:]]
    assert hrefs and all("://" not in h and not h.startswith("/") for h in hrefs)


def test_console_check_is_not_vacuous(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); missing();</script></body></html>",
                   encoding="utf-8")
    lines = console_lines(browse(bad, tmp_path, "--dump-dom").stderr)
    assert any("boom" in line for line in lines) and any("Uncaught" in line for line in lines)
