"""The machine's faults are not the server's: a failure whose evidence is the measuring
environment is published as ``not-measured-here`` (with ``environmentEvidence`` and
``environmentCause``) where a server has no record, never replaces a published record, adds its
history row, is counted apart in the sweep summary, and counts as the machine's in the
harness-fault guard. Real git repositories in temp dirs, real npm/uv/git failing for real: the
machine is broken by pointing the package managers at hosts that never resolve (RFC 6761
``.invalid``) through the host's own package-manager settings, which reach every launch.
"""

from __future__ import annotations

import datetime as dt

import pytest

from harness.db import guard
from harness.probe import machine_fault
from tests.db.sweeprepo import catalog_text, check_published, head_files, history_rows, init_repo, records, sweep, \
    well_behaved, working_files

MEMORY = "npx -y @modelcontextprotocol/server-memory@2026.8.31"  # as in tests/probe/test_real_servers.py
TIME = "uvx mcp-server-time==2026.10.19"
def _today() -> str:
    """Today (UTC) when asked: a run may cross midnight after collection."""
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def _yesterday() -> str:
    return (dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=1)).isoformat()


def _broken_registries(monkeypatch, tmp_path) -> None:
    """This machine's npm registry and Python index stop resolving; fresh caches, so nothing is
    served from an earlier install."""
    monkeypatch.setenv("npm_config_registry", "https://registry.npmjs.invalid/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("UV_INDEX_URL", "https://pypi.invalid/simple")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))


def _row(root, date: str, server: str) -> dict:
    return next(r for r in history_rows(root) if (r["date"], r["server"]) == (date, server))


@pytest.mark.slow
def test_environment_failures_keep_good_records_and_publish_apart_where_there_is_none(tmp_path, monkeypatch):
    entries = [("memory", MEMORY), ("time", TIME), ("steady", well_behaved(3)),
               {"name": "remote", "url": "https://mcp.example.invalid/mcp"},
               ("git-only", "uvx --from git+https://github.com/example/never-resolves never-resolves")]
    root = init_repo(tmp_path / "repo", catalog_text(entries[:3]))
    code, _, err = sweep(root, "--all", "--commit", "--isolation", "host", "--date", _yesterday())
    assert code == 0, err
    good = records(root)
    assert {n: r["status"] for n, r in good.items()} == {"memory": "measured", "time": "measured", "steady": "measured"}

    (root / "servers.yaml").write_text(catalog_text(entries), encoding="utf-8")
    from tests.db.sweeprepo import git
    git(root, "commit", "-qam", "two entries never measured")
    _broken_registries(monkeypatch, tmp_path)
    code, out, err = sweep(root, "--all", "--commit", "--isolation", "host")
    assert code == 0, err + out

    now = records(root)
    for name in ("memory", "time", "steady"):  # the published records stay byte for byte
        assert now[name] == good[name], name
    for name, cause in (("remote", "dns"), ("git-only", "dns")):  # none before: published apart
        rec = now[name]
        assert rec["status"] == "not-measured-here", rec["notes"]
        assert rec["environmentCause"] == cause and rec["environmentEvidence"]
        assert rec["totalTokens"] is None
    assert "mcp.example.invalid" in now["remote"]["environmentEvidence"]
    assert "github.com" in now["git-only"]["environmentEvidence"]
    check_published(working_files(root))
    assert working_files(root) == head_files(root)

    # today's history says what today's sweep found, for every server
    assert _row(root, _today(), "memory")["status"] == "not-measured-here"
    assert _row(root, _today(), "time")["status"] == "not-measured-here"
    assert _row(root, _today(), "steady")["status"] == "measured"
    assert _row(root, _yesterday(), "memory")["status"] == "measured"

    # counted apart in the summary, the kept records named as kept, the causes given
    assert "(4 environment)" in out.splitlines()[0]
    memory_line = next(line for line in out.splitlines() if line.strip().startswith("memory "))
    assert "not-measured-here" in memory_line and "[environment]" in memory_line
    assert "registry.npmjs.invalid" in memory_line and "(the published record is kept)" in memory_line


@pytest.mark.slow
def test_a_machine_that_resolves_names_publishes_the_remote_failure_as_the_server_s(tmp_path, monkeypatch):
    """The same unresolvable endpoint, on a machine where names resolve (``localhost`` stands in
    for the well-known names): the endpoint's doing, ``unreachable``."""
    monkeypatch.setenv(machine_fault.DNS_CONTROL_VARIABLE, "localhost")
    root = init_repo(tmp_path / "repo", catalog_text([{"name": "remote", "url": "https://mcp.example.invalid/mcp"}]))
    code, _, err = sweep(root, "--all", "--commit", "--isolation", "host")
    assert code == 0, err
    rec = records(root)["remote"]
    assert rec["status"] == "unreachable" and "environmentEvidence" not in rec


def test_an_environment_record_replaces_only_a_placeholder_or_another_environment_record():
    from harness.db.sweep import kept_over_environment

    fresh = {"status": "not-measured-here", "environmentEvidence": "x", "environmentCause": "dns"}
    assert kept_over_environment({"status": "measured"}, fresh)
    assert kept_over_environment({"status": "startup-failure"}, fresh)  # the server's own failure stands
    assert kept_over_environment({"status": "auth-required"}, fresh)
    assert not kept_over_environment({"status": "not-yet-run"}, fresh)
    assert not kept_over_environment({"status": "not-measured-here", "environmentEvidence": "y"}, fresh)
    assert not kept_over_environment({"status": "startup-failure", "environmentEvidence": "y"}, fresh)  # older form
    assert not kept_over_environment({"status": "measured"}, {"status": "startup-failure"})
    # the same failure, published before as the server's, now shown to be the machine's
    dns = "DNS: the host 'mcp.linear.app' does not resolve (Name or service not known) (phase: initialize)"
    fresh_dns = {**fresh, "notes": [f"unreachable here, {dns}; environment evidence (…): '…'"]}
    assert not kept_over_environment({"status": "unreachable", "notes": [dns]}, fresh_dns)
    assert kept_over_environment({"status": "unreachable", "notes": ["connection refused by x"]}, fresh_dns)
    assert kept_over_environment({"status": "measured", "notes": [dns]}, fresh_dns)


def _real(tools: int = 3) -> dict:
    return {"status": "measured", "toolCount": tools}


def test_the_guard_counts_environment_rows_as_the_machine_s():
    env = {"status": "not-measured-here", "environmentEvidence": "x", "environmentCause": "dns"}
    committed = {f"s{i}": _real() for i in range(8)} | {f"r{i}": None for i in range(5)}
    # five servers never measured fail for the machine's reasons, everything else holds: a fault
    fresh = {f"s{i}": _real() for i in range(3)} | {f"r{i}": env for i in range(5)}
    verdict = guard.check(committed, fresh)
    assert verdict.fault and set(verdict.regressed) == {f"r{i}" for i in range(5)}
    assert "5 not-measured-here: the machine's" in verdict.reason
    # the same five among many good ones: not half, no fault, still named apart
    fresh = {f"s{i}": _real() for i in range(8)} | {f"r{i}": env for i in range(5)}
    verdict = guard.check(committed, fresh)
    assert verdict.verdict == "pass" and verdict.eligible == 13 and "5 not-measured-here" in verdict.reason
    # a server's own failures over no record are not the machine's and not eligible
    fresh = {f"r{i}": {"status": "startup-failure"} for i in range(5)}
    assert guard.check(committed, fresh).verdict == "not-performed"


def test_a_record_kept_from_the_same_day_keeps_that_day_s_history_row():
    from harness.db.sweep import SweepResult

    kept = {"status": "timeout", "measuredAt": "2026-12-01T17:41:57.844Z"}
    machine_s = {"status": "not-measured-here", "measuredAt": "2026-12-01T18:47:00.000Z"}
    same_day = SweepResult({"apify": kept}, [], ["apify"], environment={"apify": machine_s})
    assert same_day.history_records()["apify"] is kept  # the day's row agrees with the published record
    earlier = {**kept, "measuredAt": "2026-11-30T12:00:00.000Z"}
    next_day = SweepResult({"apify": earlier}, [], ["apify"], environment={"apify": machine_s})
    assert next_day.history_records()["apify"] is machine_s  # a later day's row says what that day found
    fresh = SweepResult({"new": machine_s}, ["results/new/measurement.json"], [])
    assert fresh.history_records()["new"] is machine_s
