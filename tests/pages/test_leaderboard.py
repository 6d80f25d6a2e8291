"""results/leaderboard.csv and results/leaderboard.md from the standard scenario."""

from __future__ import annotations

import csv
import io

from harness.core.canonical import stringify
from harness.core.tokenizer import count
from harness.pages.leaderboard import COLUMNS
from tests.pages import builders as b
from tests.pages import scenario

STAMP = b.STAMP


def _names_tokens(tools: list) -> int:
    return count(stringify([t["name"] for t in tools]))


def test_csv_header_is_the_documented_append_only_order(published):
    root, _, _ = published
    header = (root / "results/leaderboard.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("rank,server,status,tokens,toolCount,band,color,largestTool,largestToolTokens,"
                             "sessionStartTokens,sessionStartIsFloor,sessionStartNamesTokens,"
                             "sessionStartInstructionsTokens,deferringCostsMore,isolation,arch,measuredAt,"
                             "canonicalSha256,category,notes")  # later columns are appended after these
    assert tuple(header.split(",")) == COLUMNS


def test_csv_rows_exact(published):
    root, recs, _ = published
    text = (root / "results/leaderboard.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))[1:]
    tok = {n: recs[n]["totalTokens"] for n in ("alpha", "bravo", "charlie", "kilo")}
    sha = {n: recs[n]["canonicalSha256"] for n in tok}
    alpha_names = _names_tokens(scenario.ALPHA_TOOLS)
    bravo_names = _names_tokens(scenario.BRAVO_TOOLS)
    bravo_instr = count(scenario.BRAVO_INSTRUCTIONS)
    charlie_names = _names_tokens(scenario.CHARLIE_TOOLS)
    # largest tool: most tokens, ties to the name sorting first
    largest = {n: min((-t["tokens"], t["name"]) for t in recs[n]["tools"]) for n in tok}
    largest = {n: (-neg, name) for n, (neg, name) in largest.items()}
    assert tok["charlie"] > tok["alpha"] == tok["kilo"] > tok["bravo"], tok  # scenario premise
    assert bravo_names + bravo_instr > tok["bravo"]  # scenario premise: deferring costs more

    def ranked(rank, name, status, floor, names, instr, more, iso, arch, category, notes):
        total = names + (instr or 0)
        return [str(rank), name, status, str(tok[name]), str(recs[name]["toolCount"]), "lean", "brightgreen",
                largest[name][1], str(largest[name][0]), str(total), floor, str(names),
                "" if instr is None else str(instr), more, iso, arch, STAMP, sha[name], category, notes]

    def failed(name, status, category, notes, iso="host", arch="x86_64", stamp=STAMP):
        return ["", name, status, "", "", "", "", "", "", "", "", "", "", "", iso, arch, stamp, "", category, notes]

    expected = [
        ranked(1, "charlie", "dynamic", "true", charlie_names, None, "false", "host", "", "community",
               "tool set differed between two launches (5 vs 4 tools); the number is the first launch's capture"),
        ranked(2, "alpha", "measured", "false", alpha_names, 0, "false", "host", "x86_64", "official-reference", ""),
        # kilo costs what alpha costs: the same rank
        ranked(2, "kilo", "measured", "false", alpha_names, 0, "false", "docker", "x86_64", "", ""),
        ranked(4, "bravo", "measured", "false", bravo_names, bravo_instr, "true", "host", "x86_64", "community", ""),
        failed("delta", "auth-required", "vendor-official", "exited during initialize; it said: 'DELTA_API_KEY is required'"),
        failed("echo", "startup-failure", "", "exited with code 1 during initialize; failed the same way on retry 1 (retried: startup-failure)"),
        failed("foxtrot", "timeout", "", "no response to initialize within 60 s (phase: initialize); failed the same way on retry 1 (retried: timeout); widest budget tried: 60 s"),
        failed("golf", "not-applicable", "", "ships no Linux build; the failure says: npm ERR! code EBADPLATFORM"),
        failed("hotel", "protocol-mismatch", "", 'initialize refused: unsupported protocol version (data.supported: ["2026-07-28"])'),
        failed("india", "remote-auth-wall", "remote", 'HTTP 401 with WWW-Authenticate: Bearer realm="india"'),
        failed("juliet", "not-yet-run", "", "not swept yet: no measurement on record", iso="", arch="", stamp=""),
    ]
    assert [r[:len(expected[0])] for r in rows] == expected  # columns appended later are tested apart


def test_every_catalog_entry_once_and_nothing_else(published):
    root, _, _ = published
    rows = list(csv.DictReader(io.StringIO((root / "results/leaderboard.csv").read_text(encoding="utf-8"))))
    assert sorted(r["server"] for r in rows) == sorted(e["name"] for e in scenario.CATALOG)
    assert "zulu" not in (root / "results/leaderboard.md").read_text(encoding="utf-8")
    statuses = {r["status"] for r in rows}
    assert statuses == {"measured", "dynamic", "auth-required", "startup-failure", "timeout", "not-applicable",
                        "protocol-mismatch", "remote-auth-wall", "not-yet-run"}


def test_markdown_rows_exact(published):
    root, recs, _ = published
    text = (root / "results/leaderboard.md").read_text(encoding="utf-8")
    tables = b.md_tables(text)
    ranked, deferring, others = tables[:3]
    assert ranked[0] == ["#", "Server", "Status", "Tokens", "Tools", "Largest tool", "Session start", "Band", "Trend"]
    charlie_floor = _names_tokens(scenario.CHARLIE_TOOLS)
    assert ranked[1] == ["1", "[charlie](../docs/servers/charlie.md)", "dynamic", f"{recs['charlie']['totalTokens']:,}",
                         "5", "op\\_0 (33)", f"≥ {charlie_floor}", "lean (brightgreen)",
                         "![charlie trend](../docs/sparklines/charlie.svg)"]
    assert [r[0] for r in ranked[1:]] == ["1", "2", "2", "4"]  # alpha and kilo cost the same: one rank
    assert [r[1].split("]")[0][1:] for r in ranked[1:]] == ["charlie", "alpha", "kilo", "bravo"]  # within the tie, by name
    assert "**11 catalog entries:** 3 measured, 1 dynamic, 1 auth-required, 1 startup-failure, 1 timeout, " \
           "1 not-applicable, 1 protocol-mismatch, 1 remote-auth-wall, 0 unreachable, 0 malformed-reply, 0 uncountable, 0 too-large, 0 not-measured-here, 1 not-yet-run." in text
    assert "[methodology 1.0](../docs/METHODOLOGY.md)" in text


def test_deferring_costs_more_names_every_such_row_with_both_figures(published):
    root, recs, _ = published
    text = (root / "results/leaderboard.md").read_text(encoding="utf-8")
    deferring = b.md_tables(text)[1]
    names, instr = _names_tokens(scenario.BRAVO_TOOLS), count(scenario.BRAVO_INSTRUCTIONS)
    assert deferring == [["Server", "Session start", "Headline tokens", "Names", "Instructions"],
                         ["[bravo](../docs/servers/bravo.md)", f"{names + instr:,}", f"{recs['bravo']['totalTokens']:,}",
                          f"{names:,}", f"{instr:,}"]]
    assert "1 entry: a client that defers tool definitions pays more" in text


def test_failures_listed_with_their_notes(published):
    root, _, _ = published
    others = b.md_tables((root / "results/leaderboard.md").read_text(encoding="utf-8"))[2]
    assert others[0] == ["Server", "Status", "Notes"]
    assert [(r[0].split("]")[0][1:], r[1]) for r in others[1:]] == [
        ("delta", "auth-required"), ("echo", "startup-failure"), ("foxtrot", "timeout"), ("golf", "not-applicable"),
        ("hotel", "protocol-mismatch"), ("india", "remote-auth-wall"), ("juliet", "not-yet-run")]
    assert others[4][2] == "ships no Linux build; the failure says: npm ERR\\! code EBADPLATFORM"
    assert all(r[2] for r in others[1:])


def test_no_records_at_all_every_entry_not_yet_run(tmp_path):
    from harness.pages.regen import regen

    b.write_catalog(tmp_path, [b.entry("one"), b.entry("two")])
    regen(tmp_path)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "results/leaderboard.csv").read_text(encoding="utf-8"))))
    assert [(r["server"], r["status"]) for r in rows] == [("one", "not-yet-run"), ("two", "not-yet-run")]
    assert "No entry has a measurement yet." in (tmp_path / "results/leaderboard.md").read_text(encoding="utf-8")


def test_a_one_point_trend_reads_since_its_date_here_as_on_the_dashboard(tmp_path):
    """A lone dot is no trend: the leaderboard says "since <date>" for a server with one
    comparable point, as the dashboard does, and keeps the sparkline for two or more."""
    from harness.pages.regen import regen

    root = tmp_path / "repo"
    root.mkdir()
    scenario.build(root)
    history = (root / "history.csv").read_text(encoding="utf-8").splitlines()
    (root / "history.csv").write_text("\n".join(line for line in history if not line.startswith(
        ("2026-08-03,bravo", "2026-08-10,bravo"))) + "\n", encoding="utf-8")
    regen(root)
    ranked = b.md_tables((root / "results/leaderboard.md").read_text(encoding="utf-8"))[0]
    trend = {row[1].split("]")[0][1:]: row[-1] for row in ranked[1:]}
    assert trend["bravo"] == "since 2026-11-16"
    assert trend["alpha"] == "![alpha trend](../docs/sparklines/alpha.svg)"
    rows = {r["name"]: r for r in b.dashboard_rows((root / "docs/index.html").read_text(encoding="utf-8"))}
    assert "trend" not in rows["bravo"] and len(rows["alpha"]["trend"]) >= 2  # the dashboard draws no lone dot
