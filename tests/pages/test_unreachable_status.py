"""The ``unreachable`` status through publishing: counted on the leaderboard and
the dashboard, listed after remote-auth-wall and before not-yet-run, badged lightgrey, written to
history.csv, and named on the methodology page."""

from __future__ import annotations

import csv
import io

from harness.core.record import STATUSES
from harness.pages.badge import badge_for
from harness.pages.regen import regen
from tests.pages import builders as b

URL = "https://mcp.gone.example/mcp"
NOTE = "DNS: the host 'mcp.gone.example' does not resolve (Name or service not known) (phase: initialize)"


def _build(root):
    b.write_catalog(root, [b.entry("gone", url=URL), b.entry("walled", url="https://mcp.walled.example/mcp"),
                           b.entry("fresh"), b.entry("alpha")])
    b.write_record(root, b.failed("gone", "unreachable", [NOTE], launchCommand=URL, headerNames=[]))
    b.write_record(root, b.failed("walled", "remote-auth-wall", ["HTTP 401 from https://mcp.walled.example/mcp"],
                                  launchCommand="https://mcp.walled.example/mcp", headerNames=[]))
    b.write_record(root, b.measured("alpha", [b.tool("one", "The only tool.")]))
    b.write_history(root, ["2026-12-07,gone,,,unreachable,host", "2026-12-07,alpha,9,1,measured,host"])
    regen(root)


def test_unreachable_is_one_of_the_published_statuses_in_taxonomy_order():
    assert STATUSES.index("remote-auth-wall") < STATUSES.index("unreachable") < STATUSES.index("not-yet-run")


def test_leaderboard_counts_and_lists_unreachable(tmp_path):
    _build(tmp_path)
    text = (tmp_path / "results/leaderboard.md").read_text(encoding="utf-8")
    assert ("**4 catalog entries:** 1 measured, 0 dynamic, 0 auth-required, 0 startup-failure, 0 timeout, "
            "0 not-applicable, 0 protocol-mismatch, 1 remote-auth-wall, 1 unreachable, 0 malformed-reply, "
            "0 uncountable, 0 too-large, 0 not-measured-here, 1 not-yet-run.") in text
    # The unmeasured table (the readings beside the headline come after it).
    others = next(t for t in b.md_tables(text) if any("remote-auth-wall" in cell for row in t for cell in row))
    assert [(r[0].split("]")[0][1:], r[1]) for r in others[1:]] == [
        ("walled", "remote-auth-wall"), ("gone", "unreachable"), ("fresh", "not-yet-run")]
    assert "does not resolve" in others[2][2]
    rows = list(csv.DictReader(io.StringIO((tmp_path / "results/leaderboard.csv").read_text(encoding="utf-8"))))
    gone = next(r for r in rows if r["server"] == "gone")
    assert (gone["status"], gone["tokens"]) == ("unreachable", "")


def test_dashboard_counts_unreachable(tmp_path):
    _build(tmp_path)
    rows = {r["name"]: r for r in b.dashboard_rows((tmp_path / "docs/index.html").read_text(encoding="utf-8"))}
    # the machine could not reach it: kept apart from the servers that failed
    assert (rows["gone"]["status"], rows["gone"]["group"]) == ("unreachable", "machine")
    assert (rows["walled"]["group"], rows["fresh"]["group"]) == ("failed", "machine")


def test_unreachable_badge_is_lightgrey_and_says_so():
    assert badge_for("unreachable", None) == {"schemaVersion": 1, "label": "context cost", "message": "unreachable",
                                              "color": "lightgrey"}


def test_a_failure_the_machine_caused_is_not_measured_here_not_failed(tmp_path):
    """A startup-failure whose record carries environment evidence (the measuring machine could not
    fetch the package) is grouped with the servers not measured here, on the dashboard and on its
    page; the same status without that evidence stays a failure."""
    b.write_catalog(tmp_path, [b.entry("fetched"), b.entry("broken"), b.entry("alpha")])
    evidence = "fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com"
    b.write_record(tmp_path, b.failed("fetched", "startup-failure", ["exited with code 1 during initialize"],
                                      environmentEvidence=evidence))
    b.write_record(tmp_path, b.failed("broken", "startup-failure", ["exited with code 1 during initialize"]))
    b.write_record(tmp_path, b.measured("alpha", [b.tool("one", "The only tool.")]))
    regen(tmp_path)
    rows = {r["name"]: r for r in b.dashboard_rows((tmp_path / "docs/index.html").read_text(encoding="utf-8"))}
    assert (rows["fetched"]["group"], rows["broken"]["group"]) == ("machine", "failed")
    assert rows["fetched"]["why"] == "cannot resolve host github.com"
    page = (tmp_path / "docs/servers/fetched.md").read_text(encoding="utf-8")
    assert page.split("\n")[2].startswith("**Not measured here** — status `startup-failure`")
    assert (tmp_path / "docs/servers/broken.md").read_text(encoding="utf-8").split("\n")[2].startswith("**Failed**")
