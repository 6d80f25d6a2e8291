"""docs/servers/<name>.md from the standard scenario (issue #5, 2): facts, verify command, tools,
the discover figure, notes and the Over time series boundaries."""

from __future__ import annotations

import re

from tests.publish import builders as b


def page(root, name: str) -> str:
    return (root / "docs/servers" / f"{name}.md").read_text(encoding="utf-8")


def facts(text: str) -> dict[str, str]:
    table = b.md_tables(text)[0]
    assert table[0] == ["Field", "Value"]
    return {row[0]: row[1] for row in table[1:]}


def over_time(text: str) -> list[list[str]]:
    section = text.split("## Over time", 1)[1]
    return b.md_tables(section)[0]


def test_one_page_per_catalog_entry_and_stale_pages_removed(published):
    root, _, written = published
    pages = sorted(p.name for p in (root / "docs/servers").iterdir())
    assert pages == sorted(f"{n}.{kind}" for n in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
                                                     "hotel", "india", "juliet", "kilo") for kind in ("md", "html"))
    assert not (root / "docs/sparklines/zulu.svg").exists() and not (root / "docs/trends/zulu.svg").exists()
    assert (root / "results/zulu/measurement.json").exists()  # records are never touched
    assert root / "docs/servers/alpha.md" in written


def test_measured_page_facts(published):
    root, recs, _ = published
    text = page(root, "alpha")
    f = facts(text)
    assert f["Launch command"] == "npx -y alpha-mcp@1.0.0"
    assert f["Isolation"] == "host" and f["Architecture"] == "x86\\_64"
    assert f["Protocol revision requested"] == "2025-11-25" and f["Protocol revision negotiated"] == "2025-11-25"
    assert f["Canonical SHA-256"] == f"`{recs['alpha']['canonicalSha256']}`"
    assert "```sh\nmcp-context-cost verify results/alpha/measurement.json\n```" in text
    assert "[methodology 1.0](../METHODOLOGY.md)" in text
    tools = b.md_tables(text.split("## Tools", 1)[1])[0]
    assert tools[0] == ["Tool", "Tokens", "Description tokens", "Input schema tokens", "Note"]
    assert tools[1:] == [[b_md(t["name"]), str(t["tokens"]), str(t["descriptionTokens"]), str(t["inputSchemaTokens"]), ""]
                         for t in recs["alpha"]["tools"]]


def b_md(name: str) -> str:
    return name.replace("_", "\\_")


def test_legacy_record_says_what_is_not_on_record(published):
    root, _, _ = published
    text = page(root, "charlie")
    f = facts(text)
    assert f["Architecture"] == "architecture not on record"
    assert f["Protocol revision negotiated"] == "not captured"
    assert re.search(r"\*\*≥ \d+ tokens\*\* \(deferred-load/v1\)", text)
    assert "instructions not captured in this record, so this is a floor" in text


def test_protocol_mismatch_page_shows_discover_apart_from_headline(published):
    root, recs, _ = published
    text = page(root, "hotel")
    assert "Status: **protocol-mismatch** — no number." in text
    assert facts(text)["Protocol revision negotiated"] == "not captured"
    section = text.split("## Separate figure: tools listed under the server's own revision", 1)[1]
    assert "This is **not** the headline." in section
    d = {r[0]: r[1] for r in b.md_tables(section)[0][1:]}
    assert d["Tokens"] == str(recs["hotel"]["discover"]["totalTokens"]) and d["Tools"] == "1"
    assert "## Verify it" not in text and "## Tools" not in text


def test_failure_page_has_notes_and_stderr(published):
    root, _, _ = published
    text = page(root, "echo")
    assert "- failed the same way on retry 1 \\(retried: startup-failure\\)" in text
    assert "> Error: Cannot find module 'left-pad'<br>" in text


def test_not_yet_run_page(published):
    root, _, _ = published
    text = page(root, "juliet")
    assert "Status: **not-yet-run** — no number." in text and "No measurement is on record yet." in text
    assert "No sweep of this entry is in `history.csv` yet." in text


def test_over_time_spans_only_the_same_isolation_run(published):
    root, recs, _ = published
    text = page(root, "alpha")
    t = recs["alpha"]["totalTokens"]
    assert over_time(text) == [["Date", "Tokens", "Tools", "Status", "Isolation"],
                               ["2026-11-16", str(t), "2", "measured", "host"],
                               ["2026-11-09", str(t), "2", "measured", "not recorded"],
                               ["2026-11-02", "—", "—", "timeout", "host"],
                               ["2026-10-26", str(t), "2", "measured", "host"]]
    assert ("Comparable series: 4 sweep(s), under host isolation, starting 2026-10-26. 3 earlier row(s) "
            "(2026-10-05 to 2026-10-19, measured under docker) are left out") in text
    assert "1 row(s) have no isolation on record; they still plot" in text
    assert "![alpha: context cost over time](../trends/alpha.svg)" in text


def test_not_recorded_row_before_the_switch_opens_the_series(published):
    root, recs, _ = published
    text = page(root, "kilo")
    assert [r[0] for r in over_time(text)[1:]] == ["2026-09-28", "2026-09-21", "2026-09-14"]
    assert "under docker isolation, starting 2026-09-14. 1 earlier row(s) (2026-09-07, measured under host)" in text


def test_not_recorded_rows_plot_when_nothing_else_is_on_record(published):
    root, _, _ = published
    text = page(root, "bravo")
    assert [r[0] for r in over_time(text)[1:]] == ["2026-11-16", "2026-08-10", "2026-08-03"]
    assert "starting 2026-08-03." in text and "left out" not in text
    charlie = page(root, "charlie")
    assert "2 sweep(s), none with its isolation on record, starting 2026-09-07." in charlie


def test_failure_history_rows_listed(published):
    root, _, _ = published
    assert over_time(page(root, "delta"))[1:] == [["2026-11-16", "—", "—", "auth-required", "docker"]]
