"""``audit --changed`` and ``audit --suggest`` end to end (methodology
"Capture index" and "Tool shape"): fixture servers serving byte-exact tools arrays, a fixture
capture index and tool-shape baseline read from a path and from a URL on 127.0.0.1, the three join
states with their deltas and dates, alias printing, the p90 rule at and below its edge, and every
way the published file can fail to be read — each a named problem and a failed run."""

from __future__ import annotations

import json
import socket

import pytest

from harness.audit import published_reader, suggest
from harness.pages import tool_shape
from harness.util.published import CAPTURE_INDEX, TOOL_SHAPE
from tests.audit import published_fixtures as fx
from tests.audit.conftest import approve_project, report_of, run_audit
from tests.audit.served import serving

TOKEN = "ghp_SENTINELindexToken0123456789"  # a private raw URL's ?token=: a secret like any other


def _project(tmp_path, servers: dict):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    approve_project(home, project)
    return home, project


def _published(tmp_path):
    folder = tmp_path / "published"
    folder.mkdir()
    (folder / "capture-index.json").write_text(json.dumps(fx.index()))
    (folder / "tool-shape.json").write_text(tool_shape.render(fx.shape()))
    return folder


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """One audit of a config holding every join state and both sides of the p90 edge: the index
    fetched from a URL (carrying a token), the baseline read from a path; all three outputs kept."""
    root = tmp_path_factory.mktemp("published")
    home, project = _project(root, {
        "github": fx.stdio(fx.OLD), "gh-mine": fx.stdio(fx.NEW), "mystery": fx.stdio(fx.NEVER),
        "wordy": fx.stdio(fx.WORDY), "calm": fx.stdio(fx.CALM), "ghost": {"command": "definitely-not-installed-xyz"},
    })
    folder = _published(root)
    out, md = root / "audit.json", root / "audit.md"
    with serving(folder) as base:
        done = run_audit(["--single", "--changed", f"--index={base}capture-index.json?token={TOKEN}",
                          "--tool-shape", str(folder / "tool-shape.json"), "--json", str(out), "--markdown", str(md)],
                         project, home)
    return {"done": done, "report": report_of(out.read_text()), "markdown": md.read_text(), "json": out.read_text()}


def _rows(report: dict) -> dict:
    return {row["name"]: row for row in report["changed"]["servers"]}


@pytest.mark.slow
def test_an_older_published_capture_reads_behind_with_the_delta_and_both_dates(audited):
    old, new = fx.counts(fx.OLD), fx.counts(fx.NEW)
    row = _rows(audited["report"])["github"]
    assert (row["state"], row["publishedAs"], row["canonicalSha256"]) == ("behind", "github", old["canonicalSha256"])
    assert (row["tokens"], row["publishedOn"], row["currentTokens"], row["currentSince"]) == \
        (old["totalTokens"], "2026-08-19", new["totalTokens"], "2026-08-26")
    assert row["delta"] == new["totalTokens"] - old["totalTokens"] > 0
    # the local measurement is the published number for those bytes
    local = next(s for s in audited["report"]["configs"][0]["servers"] if s["name"] == "github")
    assert local["tokens"] == row["tokens"]
    assert (f"github: behind — this capture was published 2026-08-19 ({old['totalTokens']:,} tokens); moving to "
            f"the current one, published 2026-08-26 ({new['totalTokens']:,} tokens), would add "
            f"{row['delta']:,} tokens to every request") in " ".join(audited["done"].stdout.split())


@pytest.mark.slow
def test_current_unidentified_no_capture_and_the_alias_printed_beside_the_published_name(audited):
    rows = _rows(audited["report"])
    mine = rows["gh-mine"]
    assert (mine["state"], mine["publishedAs"], mine["delta"], mine["currentSince"]) == \
        ("current", "github", None, "2026-08-26")
    assert (rows["mystery"]["state"], rows["mystery"]["publishedAs"], rows["mystery"]["delta"]) == \
        ("unidentified", None, None)
    assert rows["ghost"]["state"] is None and rows["ghost"]["status"] == "startup-failure"
    assert all(row["configs"] == [".mcp.json"] for row in rows.values())
    text = " ".join(audited["done"].stdout.split())
    assert "gh-mine (published as github): current — the published capture since 2026-08-26" in text
    assert "mystery: unidentified — canonicalSha256" in text and "nothing is claimed about it" in text
    assert "mystery (published" not in text and "ghost: no capture to join (startup-failure)" in text
    markdown = audited["markdown"]
    assert "| gh-mine (published as github) | current | — | since 2026-08-26" in markdown
    assert f"| github | behind | 2026-08-19, {fx.counts(fx.OLD)['totalTokens']:,} tokens |" in markdown


@pytest.mark.slow
def test_suggest_fires_at_p90_and_not_below_and_schemas_draw_no_advice(audited):
    section = audited["report"]["suggest"]
    assert section["baseline"] == {"servers": 7, "tools": 100, "medianDescriptionTokens": 50,
                                   "p90DescriptionTokens": 90}
    rows = {tuple(r["names"]): r for r in section["servers"]}
    wordy, calm = rows[("wordy",)], rows[("calm",)]
    placed = {t["name"]: t for t in wordy["tools"]}
    assert [placed[n]["descriptionTokens"] for n in ("at_p90", "below_p90")] == [90, 89]  # the edge, exactly
    assert placed["huge_schema"]["percentiles"]["inputSchemaTokens"] == 100  # the largest schema: still no advice
    assert wordy["suggestions"] == [{"tool": "at_p90", "descriptionTokens": 90, "percentile": 90, "medianTokens": 50,
                                     "recoveryTokens": 40, "approximate": True}]
    assert not wordy["nothingUnusual"] and calm["nothingUnusual"] and calm["suggestions"] == []
    text = " ".join(audited["done"].stdout.split())
    assert ("at_p90: description 90 tokens, at p90 of measured descriptions; trimming it to the median (50) would "
            "recover ≈40 tokens (approximate") in text
    assert "calm (2 tools): " + suggest.NOTHING_UNUSUAL in text and "below_p90: description" not in text
    assert "| at\\_p90 | " in audited["markdown"] and suggest.NOTHING_UNUSUAL in audited["markdown"]
    # every server without a number is simply not placed
    assert ("ghost",) not in rows and len(rows) == 5


@pytest.mark.slow
def test_the_checks_made_pass_and_nothing_they_find_fails_the_run(audited):
    done, report = audited["done"], audited["report"]
    assert done.returncode == 0 and report["exitCode"] == 0, done.stderr
    gates = {g["gate"]: g for g in report["gates"]}
    assert gates["changed"]["passed"] and "5 server(s) joined by canonicalSha256" in gates["changed"]["reasons"][0]
    assert "1 behind, 1 current, 3 unidentified; 1 without a capture" in gates["changed"]["reasons"][0]
    assert gates["suggest"]["passed"] and "1 description(s) at or above p90 (90 tokens)" in gates["suggest"]["reasons"][0]
    assert all(len(line) <= 100 for line in done.stdout.splitlines())


@pytest.mark.slow
def test_a_token_in_the_index_url_appears_in_no_output(audited):
    for text in (audited["done"].stdout, audited["done"].stderr, audited["json"], audited["markdown"]):
        assert TOKEN not in text and TOKEN[4:20] not in text
    assert audited["report"]["changed"]["source"].startswith("http://127.0.0.1:")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["404", "refused", "bad-json", "not-an-index", "empty-shape"])
def test_a_published_file_that_cannot_be_read_is_a_named_problem_and_fails_the_run(tmp_path, failure):
    home, project = _project(tmp_path, {"github": fx.stdio(fx.OLD)})
    folder = _published(tmp_path)
    (folder / "bad.json").write_text('{"method": "capture-index/v1", "captures": {')
    (folder / "other.json").write_text(json.dumps(fx.shape()))  # valid JSON, the wrong document
    (folder / "empty.json").write_text(json.dumps(tool_shape.build({})))
    with serving(folder) as base:
        flag, source, reason = {
            "404": ("--index", base + "missing.json", "HTTP 404"),
            "refused": ("--index", f"http://127.0.0.1:{_closed_port()}/capture-index.json", "connection refused by 127.0.0.1"),
            "bad-json": ("--index", base + "bad.json", "not JSON"),
            "not-an-index": ("--index", str(folder / "other.json"), "not a valid capture-index document"),
            "empty-shape": ("--tool-shape", base + "empty.json", "holds no measured tools"),
        }[failure]
        other = "--suggest" if flag == "--index" else "--changed"  # the other check, from its default source
        md = tmp_path / "audit.md"
        done = run_audit(["--single", other, flag, source, "--json", "--markdown", str(md)], project, home)
    report = report_of(done.stdout)
    name = "changed" if flag == "--index" else "suggest"
    section = report[name]
    assert done.returncode == 1 and report["exitCode"] == 1, done.stderr
    assert section["source"] == source and reason in section["problem"] and section["servers"] == []
    gates = {g["gate"]: g for g in report["gates"]}
    assert not gates[name]["passed"] and gates[name]["reasons"] == [f"--{name} could not be checked: "
                                                                    f"{section['problem']}"]
    assert reason in done.stderr  # said as it happened, before any server was launched
    assert report["configs"][0]["servers"][0]["status"] == "measured"  # the rest of the audit still ran
    other_name = "suggest" if name == "changed" else "changed"
    assert gates[other_name]["passed"] and report[other_name]["source"] == published_reader.default_source(
        TOOL_SHAPE if other_name == "suggest" else CAPTURE_INDEX)
    assert "**Problem:**" in md.read_text() and f"**{name}: failed**" in md.read_text()


@pytest.mark.slow
def test_the_text_report_names_the_problem(tmp_path):
    home, project = _project(tmp_path, {"github": fx.stdio(fx.OLD)})
    done = run_audit(["--single", "--index", str(tmp_path / "nowhere.json")], project, home)
    text = " ".join(done.stdout.split())
    assert done.returncode == 1
    assert f"problem: capture index could not be read from {tmp_path / 'nowhere.json'}: No such file" in text
    assert "gate changed: FAILED --changed could not be checked" in text and "Tool shape" not in text


@pytest.mark.parametrize("args", [["--index="], ["--tool-shape", " "]])
def test_an_empty_source_is_bad_input(tmp_path, args):
    home, project = _project(tmp_path, {"github": fx.stdio(fx.OLD)})
    done = run_audit(args, project, home)
    assert done.returncode == 2 and "needs a URL or a PATH" in done.stderr and done.stdout == ""


@pytest.mark.slow
def test_a_report_from_before_the_sections_still_reads_as_a_baseline(audited, tmp_path):
    from harness.audit.gates import load_baseline

    old = {k: v for k, v in audited["report"].items() if k not in ("changed", "suggest")}
    old["gates"] = [g for g in old["gates"] if g["gate"] in ("budget", "baseline")]
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert load_baseline(tmp_path / "old.json")["configs"] == audited["report"]["configs"]
    (tmp_path / "new.json").write_text(audited["json"])
    assert load_baseline(tmp_path / "new.json")["changed"] == audited["report"]["changed"]
