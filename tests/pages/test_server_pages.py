"""docs/servers/<name>.md from the standard scenario: the lead (cost, band, rank,
share; failed or not measured here), install, the per-field breakdown summing to the headline,
cheaper servers of the category, facts under Provenance, verify command, tools, the discover
figure, notes and the Over time series boundaries."""

from __future__ import annotations

import re

from tests.pages import builders as b


def page(root, name: str) -> str:
    return (root / "docs/servers" / f"{name}.md").read_text(encoding="utf-8")


def facts(text: str) -> dict[str, str]:
    table = b.md_tables(text.split("### Measurement record", 1)[1])[0]
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
    tools = b.md_tables(text.split("### Per-tool diagnostics", 1)[1])[0]
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
    assert text.split("\n")[2].startswith("**Failed** — status `protocol-mismatch`")
    assert facts(text)["Protocol revision negotiated"] == "not captured"
    section = text.split("## Separate figure: tools listed under the server's own revision", 1)[1]
    assert "This is **not** the headline." in section
    d = {r[0]: r[1] for r in b.md_tables(section)[0][1:]}
    assert d["Tokens"] == str(recs["hotel"]["discover"]["totalTokens"]) and d["Tools"] == "1"
    assert "### Verify it" not in text and "### Per-tool diagnostics" not in text
    assert "## Where the tokens go" not in text


def test_failure_page_has_notes_and_stderr(published):
    root, _, _ = published
    text = page(root, "echo")
    assert "- failed the same way on retry 1 \\(retried: startup-failure\\)" in text
    assert "> Error: Cannot find module 'left-pad'<br>" in text


def test_not_yet_run_page(published):
    root, _, _ = published
    text = page(root, "juliet")
    assert text.split("\n")[2].startswith("**Not measured here** — status `not-yet-run`")
    assert "That says nothing about the server itself." in text and "No measurement is on record yet." in text
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


def test_the_page_leads_with_cost_rank_share_then_install(published):
    root, recs, _ = published
    text = page(root, "alpha")
    t = recs["alpha"]["totalTokens"]
    lead = text.split("\n")[2]
    assert lead.startswith(f"**{t:,} tokens** of tool definitions — band **lean**, **#2 of 4** ranked servers, ")
    assert "**<0.1%** of a 200k context, 2 tools." in lead
    order = [text.index(h) for h in ("## What it is and how to install it", "## Where the tokens go",
                                     "## Over time", "## Provenance", "### Measurement record")]
    assert order == sorted(order)
    install = text.split("## What it is and how to install it", 1)[1].split("\n## ", 1)[0]
    assert "- Package: alpha-mcp" in install and "- Repository: <https://github.com/example/alpha>" in install
    assert "```sh\nnpx -y alpha-mcp@1.0.0\n```" in install


def test_failed_and_not_measured_here_are_told_apart(published):
    root, _, _ = published
    assert page(root, "echo").split("\n")[2].startswith("**Failed** — status `startup-failure`: ")
    golf = page(root, "golf").split("\n")[2]
    assert golf.startswith("**Not measured here** — status `not-applicable`") and "says nothing about the server" in golf


def test_breakdown_parts_sum_exactly_to_the_headline_on_every_page(published):
    root, recs, _ = published
    checked = 0
    for path in sorted((root / "docs/servers").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if "## Where the tokens go" not in text or "| **Total** |" not in text:
            continue
        table = b.md_tables(text.split("## Where the tokens go", 1)[1])[0]
        head, rows = table[0], table[1:]
        as_int = lambda cell: int(cell.strip("*").replace(",", "") or 0)  # noqa: E731
        total = rows[-1]
        assert total[0] == "**Total**" and as_int(total[1]) == recs[path.stem]["totalTokens"]
        body = rows[:-1]
        assert sum(as_int(r[1]) for r in body) == as_int(total[1])  # tools + punctuation
        for r in body[:-1]:  # each tool's fields sum to the tool
            assert sum(as_int(c) for c in r[2:]) == as_int(r[1]), (path.name, r)
        for column in range(2, len(head)):  # each field's column sums to its total
            assert sum(as_int(r[column]) for r in body) == as_int(total[column])
        checked += 1
    assert checked >= 4


def test_cheaper_servers_of_the_category(published):
    root, recs, _ = published
    text = page(root, "charlie")  # community: bravo is cheaper
    section = text.split("## Cheaper servers in community", 1)[1].split("\n## ", 1)[0]
    fewer = recs["charlie"]["totalTokens"] - recs["bravo"]["totalTokens"]
    assert f"- [bravo](bravo.md): {recs['bravo']['totalTokens']:,} tokens, {fewer:,} fewer, 1 tool" in section
    assert "None: no ranked server of this category costs less." in page(root, "bravo")


def test_shape_advice_names_the_largest_part_and_long_descriptions(published):
    root, _, _ = published
    section = page(root, "charlie").split("## Shape advice", 1)[1].split("\n## ", 1)[0]
    assert "The largest part of the cost is " in section
    assert ("at or above the 90th percentile of the descriptions measured here" in section
            or section.count("Nothing unusual") == 1)
    assert "## Shape advice" not in page(root, "echo")  # no number, no advice
