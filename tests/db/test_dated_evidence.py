"""Stored evidence that a new day would change: a
failing server's stderr with dates as JavaScript, RFC 1123, asctime and toLocaleString write them,
a UUID, a session id and an ephemeral port once made every weekly re-sweep rewrite its record,
badge and page. The normaliser replaces them (``harness.probe.build_record.normalise``) and never the dashed
dates that name protocol revisions."""

from __future__ import annotations

import pytest

from harness.probe import build_record as record
from harness.probe.measure import measure_sync
from harness.probe.target import Target
from harness.probe.build_record import normalise
from harness.db.sweep import same_result
from tests.db.sweeprepo import catalog_text, fixture, git, init_repo, sweep

D1, D2 = "2026-11-02", "2026-11-09"


@pytest.mark.parametrize("text, expected", [
    ("Mon Nov 30 2026 12:34:56 GMT+0000 (Coordinated Universal Time) boot", "<date> <time> GMT+0000 (Coordinated Universal Time) boot"),
    ("Date: Mon, 30 Nov 2026 12:34:56 GMT", "Date: <date> <time> GMT"),
    ("[Mon Nov 30 12:34:56 2026] up", "[<date> <time> 2026] up"),
    ("11/30/2026, 12:34:56 PM loading", "<date>, <time> PM loading"),
    ("[2026/11/30 12:34:56] ready", "[<date> <time>] ready"),
    ("on November 30th, 2026 at noon", "on <date> at noon"),
    ("request 3f2a9c1e-8b7d-4e21-9a3c-0f1e2d3c4b5a failed", "request <uuid> failed"),
    ("session a8f3e9b2c1d04f5e8a7b6c5d4e3f2a1b closed", "session <hex> closed"),
    ("listening on ws://127.0.0.1:43817/x and [::1]:40001, localhost:65535", "listening on ws://127.0.0.1:<port>/x and [::1]:<port>, localhost:<port>"),
    ("redis://localhost:6379, 10.0.0.2:53, 127.0.0.1:8080, localhost:65536", "redis://localhost:6379, 10.0.0.2:53, 127.0.0.1:8080, localhost:65536"),
    # kept: protocol revisions, versions, words, an address the launch command names
    ('supported ["2024-11-05", "2025-06-18"]', 'supported ["2024-11-05", "2025-06-18"]'),
    ("version 1.2.3 of 12/2, Marching on", "version 1.2.3 of 12/2, Marching on"),
])
def test_dates_ids_and_ports_are_normalised(text, expected):
    assert normalise(text) == expected
    assert normalise(expected) == expected  # idempotent


def test_an_address_the_launch_command_names_is_kept():
    assert normalise("cannot reach 127.0.0.1:8931", keep="--url http://127.0.0.1:8931/mcp") == \
        "cannot reach 127.0.0.1:8931"


@pytest.mark.slow
def test_two_launches_days_apart_store_the_same_evidence(tmp_path):
    state = tmp_path / "launches"
    target = Target(name="dated-fx", command=fixture("volatile", "--dated-failure", str(state)), timeout_seconds=10)
    first = record.build(measure_sync(target, isolation="host", dual=False))
    second = record.build(measure_sync(target, isolation="host", dual=False))
    assert first["status"] == second["status"] == "startup-failure"
    assert int(state.read_text()) >= 2  # really launched again, a day later each time
    assert first["stderrTail"] == second["stderrTail"] and same_result(first, second), (first["stderrTail"],
                                                                                        second["stderrTail"])
    assert "Error: cannot connect to the backing service" in first["stderrTail"]


@pytest.mark.slow
def test_a_weekly_re_sweep_of_a_dated_failure_commits_no_record(tmp_path):
    state = tmp_path / "launches"
    root = init_repo(tmp_path / "repo", catalog_text([("dated", fixture("volatile", "--dated-failure", str(state)))]))
    assert sweep(root, "--all", "--isolation", "host", "--commit", "--date", D1)[0] == 0
    code, _, err = sweep(root, "--all", "--isolation", "host", "--commit", "--date", D2)
    assert code == 0, err
    changed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert "history.csv" in changed
    assert not any(p.startswith(("results/dated/measurement", "badges/")) for p in changed), changed
