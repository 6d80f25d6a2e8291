"""Fixtures for the publish tests: the standard scenario, built and regenerated once per session and
copied for each test, so a test may change its copy freely; Chromium for the page tests (``browser``)."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from harness.pages.regen import regen
from tests.pages import scenario


@pytest.fixture(scope="session")
def _published_once(tmp_path_factory: pytest.TempPathFactory):
    """The scenario after ``regen``, never handed to a test: ``published`` copies it."""
    root = tmp_path_factory.mktemp("published") / "repo"
    root.mkdir()
    records = scenario.build(root)
    written = regen(root)
    return root, records, written


@pytest.fixture
def published(_published_once, tmp_path: Path):
    """``(root, records, written paths)`` after building the scenario and running ``regen``: a
    private copy of the tree (symlinks kept as links), records and paths for each test."""
    source, records, written = _published_once
    root = tmp_path / "repo"
    shutil.copytree(source, root, symlinks=True)
    return root, copy.deepcopy(records), [root / path.relative_to(source) for path in written]


def chromium() -> str:
    """The system Chromium; fails (never skips) when it is missing."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("chromium is not installed; the page tests need it "
                    "(Debian/Ubuntu: apt-get update && apt-get install -y chromium)")
    return found


@pytest.fixture(scope="module")
def browser():
    """One Chromium per module of page tests; each test opens its own context. Not one per session:
    while Playwright's sync API is open its event loop counts as running, so ``asyncio.run`` (every
    measurement) fails in the same thread."""
    playwright = pytest.importorskip("playwright.sync_api", reason="the test extras install playwright")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium(), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        yield launched
        launched.close()
