"""Each reading beside the headline moves no headline number, badge or canonical hash:
regenerating the real published data with all three run files present leaves every record and
badge byte-identical and every headline column of the leaderboard as it was without them."""

from __future__ import annotations

import csv
import io
import shutil

import pytest

from harness.core.jsparse import parse
from harness.readings import store
from harness.pages.regen import regen
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # each test regenerates the whole published database

HEADLINE = ("rank", "server", "status", "tokens", "toolCount", "band", "color", "canonicalSha256")


def _copy_published(root):
    shutil.copy(REPO / "servers.yaml", root / "servers.yaml")
    shutil.copy(REPO / "history.csv", root / "history.csv")
    shutil.copytree(REPO / "badges", root / "badges")
    (root / "results").mkdir()
    for record in (REPO / "results").glob("*/measurement.json"):
        (root / "results" / record.parent.name).mkdir()
        shutil.copy(record, root / "results" / record.parent.name / "measurement.json")


def _headline(root) -> list[tuple]:
    rows = csv.DictReader(io.StringIO((root / "results/leaderboard.csv").read_text(encoding="utf-8")))
    return [tuple(r[c] for c in HEADLINE) for r in rows]


def _snapshot(root) -> dict:
    return {p.relative_to(root): p.read_bytes() for p in [*root.glob("results/*/measurement.json"), *root.glob("badges/*")]}


def test_the_readings_move_no_headline_byte(tmp_path):
    plain, beside = tmp_path / "plain", tmp_path / "beside"
    for root in (plain, beside):
        root.mkdir()
        _copy_published(root)
    records = {p.parent.name: parse(p.read_text(encoding="utf-8")) for p in (beside / "results").glob("*/measurement.json")}
    measured = sorted(n for n, r in records.items() if r["status"] in ("measured", "dynamic"))[:5]
    sha = {n: records[n]["canonicalSha256"] for n in measured}
    tokens = {n: int(records[n]["totalTokens"]) for n in measured}
    store.write(beside, "divergence", {"method": "tools-delta/v1", "rows": [
        {"server": n, "model": "claude-sonnet-4-5-20250929", "countedAt": "2026-11-30", "canonicalSha256": sha[n],
         "totalTokens": tokens[n], "mappedTokens": tokens[n] // 2, "withToolsTokens": 400 + tokens[n],
         "withoutToolsTokens": 8, "claudeTokens": 392 + tokens[n]} for n in measured]})
    store.write(beside, "capability-probe", {"method": "capability-probe/v1", "declared": {}, "answers": {}, "rows": [
        {"server": measured[0], "probedAt": "2026-11-30", "isolation": "host", "gained": [{"name": "x", "tokens": 9}],
         "lost": [], "changed": [], "deltaTokens": 10,
         "withoutCapabilities": {"totalTokens": tokens[measured[0]], "toolCount": 1, "canonicalSha256": sha[measured[0]]},
         "withCapabilities": {"totalTokens": tokens[measured[0]] + 10, "toolCount": 2, "canonicalSha256": "f" * 64}}]})
    store.write(beside, "cross-check", {"method": "cli-cross-check/v1", "release": "sd2k/mcp-tokens v0.2.1", "rows": [
        {"server": measured[1], "checkedAt": "2026-11-30", "release": "sd2k/mcp-tokens v0.2.1", "isolation": "host",
         "ourStatus": "measured", "status": "compared", "canonicalSha256": sha[measured[1]], "totalTokens": tokens[measured[1]],
         "mappedTokens": 100, "toolNames": ["a"], "cli": {"provider": "tiktoken", "model": "gpt-4o", "toolsTokens": 101,
                                                         "totalTokens": 101, "toolNames": ["a"]}}]})
    before = _snapshot(beside)
    regen(plain)
    regen(beside)
    assert _snapshot(beside) == before == _snapshot(plain)
    assert _headline(beside) == _headline(plain)
    cells = {r["server"]: r for r in csv.DictReader(io.StringIO((beside / "results/leaderboard.csv").read_text()))}
    assert all(cells[n]["claudeTokens"] == str(392 + tokens[n]) for n in measured)
    assert cells[measured[0]]["capabilityFloorTokens"] == "10" and cells[measured[1]]["mcpTokensPercent"] == "1.00"


def test_a_broken_run_file_is_named_and_regen_writes_nothing(tmp_path):
    from tests.probe.helpers import run_cli

    root = tmp_path / "repo"
    root.mkdir()
    _copy_published(root)
    for text, words in (('{"method": "tools-delta/v1", "rows": [{"server": "memory"}]}', "required property"),
                        ("{not json", "not JSON")):
        (root / "results/divergence.json").write_text(text)
        done = run_cli("regen", "--root", str(root))
        assert done.returncode == 2 and "divergence.json" in done.stderr and words in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
        assert not (root / "results/leaderboard.md").exists()
