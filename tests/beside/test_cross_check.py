"""The mcp-tokens cross-check (cli-cross-check/v1), with a labelled CONTRACT STAND-IN
for the CLI (tests/fixtures/mcp_tokens_standin.py, packaged as the release asset is): the
like-for-like rule — names differ → silence; our capture no longer published → silence — the
pin (an archive whose SHA-256 is not the pinned one is refused, nothing written), and the argv in
each isolation."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import os
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.cli import cross_check_cmd
from harness.core.jsparse import parse
from harness.probe import build_record as record
from harness.readings import mcp_tokens
from harness.probe.measure import CONFIRMATION_VARIABLE, measure_sync
from harness.probe.target import Target
from harness.pages import readings
from tests.conftest import REPO, fixture_command
from tests.probe.helpers import run_cli
from tests.pages import builders as b

STANDIN = REPO / "tests" / "fixtures" / "mcp_tokens_standin.py"


def standin_asset(folder: Path) -> tuple[Path, str]:
    """The stand-in packaged like the release asset: ``<triple>/mcp-tokens`` inside a .tar.xz."""
    script = folder / "mcp-tokens"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {STANDIN} \"$@\"\n")
    script.chmod(0o755)
    archive = folder / mcp_tokens.ASSET
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(script, arcname="mcp-tokens-x86_64-unknown-linux-gnu/mcp-tokens")
    return archive, hashlib.sha256(archive.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """A repository with four published fixture servers, then one cross-check run over them."""
    root = tmp_path_factory.mktemp("repo")
    state = tmp_path_factory.mktemp("state")
    commands = {
        "steady": fixture_command("well_behaved", "--tools", "4"),
        # our publish: launches 1-2; the cross-check's own measurement 3-4; the CLI launch 5
        "renamed": fixture_command("grows_on_launch", "--state", str(state / "renamed"), "--from", "5"),
        "moved": fixture_command("grows_on_launch", "--state", str(state / "moved"), "--from", "3"),
        "broken": fixture_command("second_launch_fails", "--state", str(state / "broken")),
    }
    b.write_catalog(root, [{"name": n, "command": c} for n, c in commands.items()])
    with pytest.MonkeyPatch.context() as patch:  # launch numbers script these fixtures: one at a time
        patch.setenv(CONFIRMATION_VARIABLE, "after")
        for name, command in commands.items():
            measured = measure_sync(Target(name=name, command=command), isolation="host", pass_declared_values=False)
            record.write(record.build(measured), root / "results")
    archive, sha = standin_asset(tmp_path_factory.mktemp("asset"))
    args = SimpleNamespace(root=root, catalog="servers.yaml", only=None, top=None, asset=archive,
                           asset_url=False, isolation="host", no_regen=False)
    assert cross_check_cmd.run(args, expected_sha256=sha) == 0
    rows = {r["server"]: r for r in parse((root / "results/cross-check.json").read_text())["rows"]}
    return root, rows, archive


def _csv(root: Path) -> dict[str, dict]:
    return {r["server"]: r for r in csv.DictReader(io.StringIO((root / "results/leaderboard.csv").read_text()))}


@pytest.mark.slow
def test_like_for_like_prints_the_percentage_against_the_projection(checked):
    root, rows, _ = checked
    steady = rows["steady"]
    assert steady["status"] == "compared" and steady["release"] == "sd2k/mcp-tokens v0.2.1"
    assert steady["cli"]["provider"] == "tiktoken" and steady["cli"]["model"] == "gpt-4o"
    assert sorted(steady["cli"]["toolNames"]) == sorted(steady["toolNames"]) and len(steady["toolNames"]) == 4
    published = parse((root / "results/steady/measurement.json").read_text())
    assert steady["canonicalSha256"] == published["canonicalSha256"]
    expected = (steady["cli"]["toolsTokens"] - steady["mappedTokens"]) * 100 / steady["mappedTokens"]
    assert _csv(root)["steady"]["mcpTokensPercent"] == f"{expected:.2f}"
    assert _csv(root)["steady"]["mcpTokens"] == str(int(steady["cli"]["toolsTokens"]))
    page = (root / "docs/servers/steady.md").read_text()
    assert f"counts {int(steady['cli']['toolsTokens']):,} against our {int(steady['mappedTokens']):,}" in page
    board = (root / "results/leaderboard.md").read_text()
    assert f"On the 1 printed row: {_csv(root)['steady']['mcpTokensPercent']}%." in board.replace(": +", ": ")
    assert " to " not in board.split("On the 1 printed row")[1].split("\n")[0]  # one value is no range


@pytest.mark.slow
def test_names_differ_prints_nothing(checked):
    root, rows, _ = checked
    renamed = rows["renamed"]
    assert renamed["status"] == "compared"
    assert "tool_003" in renamed["cli"]["toolNames"] and "tool_003" not in renamed["toolNames"]
    assert _csv(root)["renamed"]["mcpTokens"] == "" and _csv(root)["renamed"]["mcpTokensPercent"] == ""
    assert "no like-for-like comparison" in (root / "docs/servers/renamed.md").read_text()


@pytest.mark.slow
def test_a_capture_that_is_no_longer_published_prints_nothing(checked):
    root, rows, _ = checked
    moved = rows["moved"]
    assert moved["status"] == "compared" and sorted(moved["cli"]["toolNames"]) == sorted(moved["toolNames"])
    published = parse((root / "results/moved/measurement.json").read_text())
    assert moved["canonicalSha256"] != published["canonicalSha256"]  # the server moved after it was published
    assert _csv(root)["moved"]["mcpTokensPercent"] == ""


@pytest.mark.slow
def test_our_failed_measurement_is_kept_as_data_and_prints_nothing(checked):
    root, rows, _ = checked
    assert rows["broken"]["status"] == "not-measured" and rows["broken"]["ourStatus"] == "startup-failure"
    assert "cli" not in rows["broken"] and _csv(root)["broken"]["mcpTokens"] == ""


def test_the_rule_itself():
    sha = "a" * 64
    row = SimpleNamespace(name="x", fields={"status": "measured", "canonicalSha256": sha})
    good = {"canonicalSha256": sha, "status": "compared", "toolNames": ["a", "b"], "mappedTokens": 200,
            "release": "r", "checkedAt": "2026-12-01",
            "cli": {"toolsTokens": 201, "toolNames": ["b", "a"], "provider": "tiktoken", "model": "gpt-4o", "totalTokens": 201}}
    files = {"divergence": {}, "capability-probe": {}}
    got = lambda c: readings.for_row(row, files | {"cross-check": {"x": c}}).cross  # noqa: E731
    assert got(good).percent == pytest.approx(0.5) and readings.percent(got(good).percent) == "+0.50%"
    assert got(good | {"toolNames": ["a", "c"]}) is None  # names differ
    assert got(good | {"toolNames": ["a"]}) is None  # one more tool on one side
    assert got(good | {"canonicalSha256": "b" * 64}) is None  # stale
    assert got(good | {"status": "cli-failed"}) is None
    assert readings.percent(-0.001) == "0.00%" and readings.percent(-1.5) == "-1.50%"


@pytest.mark.slow
def test_the_command_refuses_an_asset_without_the_pinned_sha_and_writes_nothing(checked, tmp_path):
    root, _, archive = checked
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    done = run_cli("cross-check", "--root", str(root), "--asset", str(archive), "--isolation", "host")
    assert done.returncode == 2 and "sd2k/mcp-tokens v0.2.1" in done.stderr and "nothing written" in done.stderr
    assert "refusing" in done.stderr
    done = run_cli("cross-check", "--root", str(root), "--asset", str(tmp_path / "absent.tar.xz"))
    assert done.returncode == 2 and "sd2k/mcp-tokens v0.2.1 cannot be obtained" in done.stderr
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_a_wrong_archive_is_refused_even_with_a_pin(tmp_path):
    archive, sha = standin_asset(tmp_path)
    with pytest.raises(mcp_tokens.Unavailable, match="not the pinned"):
        mcp_tokens.provision(archive, tmp_path, expected_sha256="0" * 64)
    binary = mcp_tokens.provision(archive, tmp_path / "ok", expected_sha256=sha)
    assert binary.name == "mcp-tokens" and binary.stat().st_mode & 0o777 == 0o500


def test_argv_in_each_isolation(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))  # the sandbox's package cache
    binary = tmp_path / "bin" / "mcp-tokens"
    target = Target(name="x", command="npx -y some-server@1.0.0 --flag", env=("API_KEY",), timeout_seconds=45)
    argv, _, _ = mcp_tokens.argv_for(binary, target, "host", tmp_path, {"PATH": "/usr/bin"})
    assert argv == [str(binary), "analyze", "--provider", "tiktoken", "--model", "gpt-4o", "--format", "json",
                    "--timeout", "45", "--", "npx", "-y", "some-server@1.0.0", "--flag"]
    docker, _, _ = mcp_tokens.argv_for(binary, target, "docker", tmp_path, {"PATH": "/usr/bin"})
    assert f"{binary}:{mcp_tokens.DOCKER_MOUNT}:ro" in docker and "-e" in docker and "API_KEY" in docker
    assert docker[docker.index("-v") + 2] == "node:22.21.1-bookworm-slim"
    assert docker[docker.index("node:22.21.1-bookworm-slim") + 1] == mcp_tokens.DOCKER_MOUNT
    if Path("/usr/bin/bwrap").exists():
        binary.parent.mkdir()
        binary.write_text("")
        binary.chmod(0o500)
        boxed, launcher_env, fds = mcp_tokens.argv_for(binary, target, "sandbox", tmp_path, {"PATH": "/usr/bin"})
        for fd in fds:  # bwrap would read the server's env (HOME=/home/mcp, ...) from it
            assert b"--setenv\0HOME\0/home/mcp\0" in os.pread(fd, 1 << 16, 0)
            os.close(fd)
        at = boxed.index("--")
        assert boxed[at - 3:at] == ["--ro-bind", str(binary.parent), str(binary.parent)]
        assert boxed[at + 1] == str(binary) and "--model" in boxed and launcher_env == {}


def test_report_parsing_rejects_what_the_contract_does_not_promise():
    good = '{"counter":{"provider":"tiktoken","model":"gpt-4o"},"total_tokens":12,"tools":{"total":10,"count":1,"items":[{"name":"a","tokens":10}]}}'
    assert mcp_tokens.parse_report(good) == mcp_tokens.Report(10, 12, ("a",), "tiktoken", "gpt-4o")
    for bad in ("not json", "{}", good.replace('"total":10', '"total":"10"'), good.replace('"items":[', '"items":{"x":[').replace("}]}}", "}]}}}")):
        with pytest.raises(ValueError):
            mcp_tokens.parse_report(bad)
    assert asyncio.iscoroutinefunction(mcp_tokens.run)
