"""The ``not-measured-here`` status through publishing: counted apart on the leaderboard and the
dashboard with a sentence saying the machine failed, not the server; listed after the servers'
own failures; badged lightgrey; written to history.csv."""

from __future__ import annotations

import pytest

from harness.core.record import STATUSES
from harness.pages.badge import badge_for
from harness.pages.board import NOT_MEASURED_HERE_NOTE
from harness.pages.regen import regen
from tests.pages import builders as b
from tests.pages.test_dashboard_chromium import Page

playwright = pytest.importorskip("playwright.sync_api", reason="the test extras install playwright")

EVIDENCE = "npm EBADENGINE: @bytebase/dbhub@1.4.0 requires node >=22.5.0; this machine has v20.20.2"


def _build(root, *, with_machine_row: bool = True):
    entries = [b.entry("alpha"), b.entry("broken")] + ([b.entry("old-node")] if with_machine_row else [])
    b.write_catalog(root, entries)
    b.write_record(root, b.measured("alpha", [b.tool("one", "The only tool.")]))
    b.write_record(root, b.failed("broken", "startup-failure", ["the server exited before replying"]))
    if with_machine_row:
        b.write_record(root, b.failed("old-node", "not-measured-here", [f"startup-failure here; {EVIDENCE}"],
                                      environmentEvidence=EVIDENCE, environmentCause="runtime-version"))
    b.write_history(root, ["2026-12-07,alpha,9,1,measured,host", "2026-12-07,broken,,,startup-failure,host"]
                    + (["2026-12-07,old-node,,,not-measured-here,host"] if with_machine_row else []))
    regen(root)


def test_counted_apart_and_said_so_on_the_leaderboard(tmp_path):
    assert STATUSES.index("unreachable") < STATUSES.index("not-measured-here") < STATUSES.index("not-yet-run")
    _build(tmp_path)
    text = (tmp_path / "results/leaderboard.md").read_text(encoding="utf-8")
    assert "1 startup-failure, " in text and "1 not-measured-here, 0 not-yet-run." in text
    assert NOT_MEASURED_HERE_NOTE in text
    others = next(t for t in b.md_tables(text) if any("not-measured-here" in cell for row in t for cell in row))
    assert [(r[0].split("]")[0][1:], r[1]) for r in others[1:]] == [("broken", "startup-failure"),
                                                                   ("old-node", "not-measured-here")]


def _group(page: Page, label: str) -> list[str]:
    """Switch the dashboard to the group ``label``; the names of the rows it then draws."""
    page.page.locator("#filter-group button", has_text=label).click()
    return page.names()


@pytest.mark.slow
@pytest.mark.parametrize("width", (1280, 390))
def test_counted_apart_on_the_dashboard(tmp_path, browser, width):
    _build(tmp_path)
    page = Page(browser, tmp_path / "docs/index.html", width)
    counts = [" ".join(c.split()) for c in page.page.locator("#filter-group button").all_inner_texts()]
    assert counts == ["Ranked 1", "Failed 1", "Not measured here 1"]
    note = page.page.locator("#machine-note")
    assert not note.is_visible()  # the machine's sentence goes with its group
    assert _group(page, "Failed") == ["broken"] and not note.is_visible()
    assert _group(page, "Not measured here") == ["old-node"]
    assert not page.page.locator("#filter-band").is_visible()  # bands belong to ranked rows only
    chip = page.page.locator('#leaderboard tr[data-name="old-node"] .chip')
    assert chip.inner_text() == "not-measured-here" and "g-machine" in chip.get_attribute("class")
    assert note.is_visible() and note.inner_text() == NOT_MEASURED_HERE_NOTE + "."
    assert page.no_sideways_scroll() and page.messages == []
    page.close()


def test_no_sentence_when_no_row_has_the_status(tmp_path):
    _build(tmp_path, with_machine_row=False)
    assert NOT_MEASURED_HERE_NOTE not in (tmp_path / "results/leaderboard.md").read_text(encoding="utf-8")
    assert 'id="machine-note"' not in (tmp_path / "docs/index.html").read_text(encoding="utf-8")


def test_badge_is_lightgrey_and_says_so():
    assert badge_for("not-measured-here", None)["message"] == "not-measured-here"
    assert badge_for("not-measured-here", None)["color"] == "lightgrey"


def test_a_launch_note_is_shown_on_the_server_page(tmp_path):
    note = "pydantic<2.12 is pinned beside it: the documented command exits before it answers."
    b.write_catalog(tmp_path, [b.entry("chroma", command='uvx --with "pydantic<2.12" chroma-mcp==0.2.6',
                                       launchNote=note), b.entry("plain")])
    b.write_record(tmp_path, b.measured("chroma", [b.tool("one", "The only tool.")],
                                        launchCommand='uvx --with "pydantic<2.12" chroma-mcp==0.2.6'))
    b.write_record(tmp_path, b.measured("plain", [b.tool("two", "Another tool.")]))
    b.write_history(tmp_path, ["2026-12-07,chroma,9,1,measured,host", "2026-12-07,plain,9,1,measured,host"])
    regen(tmp_path)
    page = (tmp_path / "docs/servers/chroma.md").read_text(encoding="utf-8")
    assert "| Launched unlike its documentation | pydantic&lt;2.12 is pinned beside it" in page
    assert "Launched unlike its documentation" in (tmp_path / "docs/servers/chroma.html").read_text(encoding="utf-8")
    assert "Launched unlike" not in (tmp_path / "docs/servers/plain.md").read_text(encoding="utf-8")


def _kept(root, later: list[str]):
    """Records of kept and other measured 2026-11-30 (their history rows say so), then the
    ``later`` history rows."""
    records = [b.measured("kept", [b.tool("one", "The only tool.")]), b.measured("other", [b.tool("two", "Another tool.")])]
    b.write_catalog(root, [b.entry("kept"), b.entry("other")])
    for record in records:
        b.write_record(root, record)
    b.write_history(root, [f"2026-11-30,{r['server']},{r['totalTokens']},{r['toolCount']},measured,host" for r in records]
                    + later)
    regen(root)
    return (root / "docs/servers/kept.md").read_text(encoding="utf-8"), \
        (root / "docs/servers/kept.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_kept_record_says_since_when_it_could_not_be_measured_here(tmp_path, browser):
    page, html = _kept(tmp_path, ["2026-12-01,kept,,,not-measured-here,host",
                                  "2026-12-02,kept,,,not-measured-here,host", "2026-12-03,kept,,,not-measured-here,host"])
    assert "**Not measured here since 2026-12-01** (3 sweep(s))" in page and "captured 2026-11-30" in page
    assert "Not measured here since 2026-12-01" in html
    board = (tmp_path / "results/leaderboard.md").read_text(encoding="utf-8")
    assert "| measured (not measured here since 2026-12-01) |" in board
    assert "| [other](" in board and "other](../docs/servers/other.md) | measured |" in board
    rows = {r["name"]: r for r in b.dashboard_rows((tmp_path / "docs/index.html").read_text(encoding="utf-8"))}
    assert (rows["kept"]["status"], rows["kept"]["since"]) == ("measured", "2026-12-01") and "since" not in rows["other"]
    for width in (1280, 390):
        dashboard = Page(browser, tmp_path / "docs/index.html", width)
        cells = {name: dashboard.page.locator(f'#leaderboard tr[data-name="{name}"] td.c-name') for name in ("kept", "other")}
        assert cells["kept"].locator(".since").inner_text() == "not measured here since 2026-12-01"
        assert cells["kept"].locator(".since").is_visible() and cells["other"].locator(".since").count() == 0
        assert dashboard.no_sideways_scroll() and dashboard.messages == []
        dashboard.close()


@pytest.mark.slow
def test_a_streak_broken_by_a_measurement_or_a_server_failure_is_not_shown(tmp_path):
    for newest in ("2026-12-03,kept,9,1,measured,host", "2026-12-03,kept,,,startup-failure,host", None):
        page, _ = _kept(tmp_path, ["2026-12-01,kept,,,not-measured-here,host", newest] if newest else [])
        assert "Not measured here since" not in page, newest
        board = (tmp_path / "results/leaderboard.md").read_text(encoding="utf-8")
        assert "not measured here since" not in board, newest
        assert not any("since" in r for r in b.dashboard_rows((tmp_path / "docs/index.html").read_text(encoding="utf-8")))
