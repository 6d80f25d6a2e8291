"""What a stored record says is what happened: notes generated from the attempt list, the budget that produced the
capture, unconfirmed single launches, auth evidence that needs a claim, stable evidence text and a
stable working directory. Real fixture servers (``tests/fixtures/servers``), launched on the host.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from harness.core.jsparse import parse
from harness.db.sweep import same_result, settle
from harness.probe import build_record as record, status, workdir
from harness.probe.build_record import narrative
from harness.probe.measure import measure_sync
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target
from harness.probe.build_record import normalise
from harness.util import schemas
from tests.conftest import fixture_command


@pytest.fixture(autouse=True)
def _scripted_in_order(launches_in_order):
    """``launch_script`` scripts launches by the order they start in: no confirmation beside the first."""


def _measure(tmp_path, script: str, timeout: float = 2.0, dual: bool = True, env=()) -> dict:
    state = tmp_path / f"launches-{abs(hash(script))}"
    target = Target(name="scripted", command=fixture_command("launch_script", "--state", str(state), "--script", script),
                    timeout_seconds=timeout, env=tuple(env))
    rec = record.build(measure_sync(target, dual=dual, isolation="host"))
    schemas.check("measurement", parse(record.serialize(rec)))
    return rec


def _notes(rec: dict) -> str:
    return "\n".join(rec["notes"])


# --------------------------------------------------------------------------------------------
# Notes from the attempt list


@pytest.mark.slow
def test_a_timeout_then_an_auth_error_is_not_the_same_way(tmp_path):
    rec = _measure(tmp_path, "hang,auth", timeout=1, env=("FIXTURE_API_KEY",))
    assert rec["status"] == "auth-required"
    notes = _notes(rec)
    assert "same way" not in notes
    assert "failed differently on retry 1: attempt 1 at 1 s: timeout; attempt 2, retry at 2 s: auth-required" in notes
    assert [(a["role"], a["budgetMs"], a["status"]) for a in rec["attempts"]] == [
        ("first", 1000, "timeout"), ("retry", 2000, "auth-required")]
    assert rec["timeoutMs"] == 2000  # the budget of the attempt whose evidence is published


@pytest.mark.slow
def test_a_capture_from_the_retry_carries_the_retry_budget(tmp_path):
    rec = _measure(tmp_path, "hang,ok", timeout=1)
    assert rec["status"] == "measured" and rec["confirmed"] is True
    assert rec["timeoutMs"] == 2000
    assert "measured on retry 1 (attempt 2, retry at 2 s) after attempt 1 at 1 s ended timeout" in _notes(rec)
    assert [a["role"] for a in rec["attempts"]] == ["first", "retry", "confirmation"]
    assert rec["attempts"][2]["budgetMs"] == 2000  # the confirmation ran at the budget that worked


def test_the_same_failure_twice_says_so_with_both_budgets(tmp_path):
    rec = _measure(tmp_path, "fail", timeout=5)
    assert rec["status"] == "startup-failure" and rec["timeoutMs"] == 5000
    assert "failed the same way on retry 1: startup-failure on every attempt (budgets: 5 s, 5 s)" in _notes(rec)


@pytest.mark.slow
def test_three_attempts_are_all_described(tmp_path):
    """A timeout retried at twice the budget, which then fails to start, is retried once more
    (each retryable status once): the note lists the three in order."""
    rec = _measure(tmp_path, "hang,fail,fail", timeout=1)
    assert rec["status"] == "startup-failure"
    assert ("failed differently on retry 2: attempt 1 at 1 s: timeout; attempt 2, retry at 2 s: startup-failure; "
            "attempt 3, retry at 2 s: startup-failure") in _notes(rec)


def test_a_failed_confirming_launch_leaves_the_capture_unconfirmed(tmp_path):
    rec = _measure(tmp_path, "ok,fail", timeout=5)
    assert rec["status"] == "measured" and rec["confirmed"] is False
    note = next(n for n in rec["notes"] if n.startswith("second launch failed (startup-failure: "))
    assert note.endswith("stderr ends: 'Error: something broke'); the first launch's capture is published, unconfirmed")
    assert rec["attempts"][-1]["role"] == "confirmation" and rec["attempts"][-1]["status"] == "startup-failure"


def test_a_single_launch_is_unconfirmed(tmp_path):
    rec = _measure(tmp_path, "ok", timeout=5, dual=False)
    assert rec["confirmed"] is False and [a["role"] for a in rec["attempts"]] == ["first"]
    assert rec["notes"] == []  # the field says it; there is no evidence to quote


def test_two_identical_launches_are_confirmed_with_no_generated_note(tmp_path):
    rec = _measure(tmp_path, "ok", timeout=5)
    assert rec["confirmed"] is True and rec["notes"] == []


def test_a_failure_record_has_no_confirmed_field_and_the_schema_says_so(tmp_path):
    rec = _measure(tmp_path, "fail", timeout=5)
    assert "confirmed" not in rec
    with pytest.raises(schemas.SchemaViolation):
        schemas.check("measurement", {**rec, "confirmed": False})


@pytest.mark.parametrize("status, attempts, expected", [
    ("timeout", [("first", 60000, "timeout"), ("retry", 120000, "timeout")],
     ["failed the same way on retry 1: timeout on every attempt (budgets: 60 s, 120 s)", "widest budget tried: 120 s"]),
    ("timeout", [("first", 30000, "timeout")], ["widest budget tried: 30 s"]),
    ("protocol-mismatch", [("first", 60000, "protocol-mismatch")], []),
    ("dynamic", [("first", 60000, None), ("confirmation", 60000, None)], []),
    ("dynamic", [("first", 60000, "startup-failure"), ("retry", 60000, None), ("confirmation", 60000, None)],
     ["captured on retry 1 (attempt 2, retry at 60 s) after attempt 1 at 60 s ended startup-failure: e"]),
    ("measured", [], []),  # a record from before attempts had roles: nothing is generated
])
def test_narrative_is_a_function_of_the_attempts(status, attempts, expected):
    listed = [{"role": r, "budgetMs": b, "status": s, "evidence": "e" if s else None} for r, b, s in attempts]
    assert narrative(status, listed) == expected


# --------------------------------------------------------------------------------------------
# Auth evidence needs a claim tied to the name


def _failed(stderr: str) -> Capture:
    return Capture(requested_version="2025-06-18", phase="initialize", stderr_tail=stderr,
                   failure=Failure("exited", "initialize", "exited with code 1 during initialize", exit_code=1))


DECLARED = Target(name="x", command="x", env=("SLACK_TEAM_ID", "SLACK_BOT_TOKEN", "GITHUB_TOKEN", "API_KEY"))


@pytest.mark.parametrize("line, auth", [
    ("Starting with SLACK_TEAM_ID workspace config", False),
    ("Using API_KEY from the environment", False),
    ("Loaded GITHUB_TOKEN; connecting to api.github.com: ECONNREFUSED", False),
    ("SLACK_BOT_TOKEN=<set> team SLACK_TEAM_ID=<set>", False),
    ("Error: SLACK_BOT_TOKEN is required", True),
    ("Missing SLACK_TEAM_ID", True),
    ("GITHUB_TOKEN: 401 Unauthorized", True),
    ("invalid api_key supplied", True),  # a credential word, no declared name needed
    ("environment variable GITHUB_TOKEN not set", True),
])
def test_auth_evidence_needs_a_credential_claim(line, auth):
    verdict = status.classify(DECLARED, _failed(f"booting\n{line}\n"))
    assert (verdict.status == "auth-required") is auth, verdict


def test_a_real_server_that_only_names_its_variable_is_a_startup_failure(tmp_path):
    rec = _measure(tmp_path, "mention", timeout=5, env=("FIXTURE_TEAM_ID",))
    assert rec["status"] == "startup-failure", rec["notes"]
    rec = _measure(tmp_path, "auth", timeout=5, env=("FIXTURE_API_KEY",))
    assert rec["status"] == "auth-required", rec["notes"]


# --------------------------------------------------------------------------------------------
# Stable evidence, stable working directory


def _volatile(tmp_path, *flags: str) -> dict:
    target = Target(name="volatile-fx", command=fixture_command("volatile", *flags), timeout_seconds=10)
    return record.build(measure_sync(target, isolation="host"))


def test_volatile_stderr_is_stored_the_same_every_time(tmp_path):
    first, second = _volatile(tmp_path, "--noisy-failure"), _volatile(tmp_path, "--noisy-failure")
    assert first["status"] == "startup-failure"
    for field in ("stderrTail", "notes"):
        assert first[field] == second[field], field
    assert [a["evidence"] for a in first["attempts"]] == [a["evidence"] for a in second["attempts"]]
    assert same_result(first, second) and settle(first, second) is first
    tail = first["stderrTail"]
    for placeholder in ("<time>", "(node:<pid>)", "pid <pid>", "/tmp/<tmp>", "<n>ms", "0x<addr>", "<time>-debug-0.log"):
        assert placeholder in tail, (placeholder, tail)
    assert "Error: cannot connect to the backing service" in tail  # what matters is kept


@pytest.mark.parametrize("mode", ["host", "sandbox"])
def test_a_server_that_describes_its_working_directory_is_measured_not_dynamic(tmp_path, mode):
    target = Target(name="cwd-fx", command=fixture_command("volatile", "--cwd-in-description"), timeout_seconds=20)
    first = record.build(measure_sync(target, isolation=mode))
    second = record.build(measure_sync(target, isolation=mode))
    assert first["status"] == second["status"] == "measured", first["notes"]
    assert first["canonicalSha256"] == second["canonicalSha256"]
    # host: the stable per-entry directory; sandbox: one fixed path inside, the host path hidden
    expected = "/work/cwd-fx." if mode == "host" else "checked out in /home/mcp/work."
    assert expected in first["rawToolsCapture"][0]["description"]
    assert mode == "host" or str(workdir.base_dir()) not in json.dumps(first)


@pytest.mark.parametrize("text, keep, expected", [
    ("2026-11-30T12:34:56.789Z boot", "", "<time> boot"),
    ("2026-11-30 12:34:56,123 INFO up", "", "<time> INFO up"),
    ("log: /root/.npm/_logs/2026-11-30T12_34_56_789Z-debug-0.log", "", "log: /root/.npm/_logs/<time>-debug-0.log"),
    ("[12:34:56] ready", "", "[<time>] ready"),
    ("cache /tmp/tmpabcdefgh/x and /tmp/npx-12345/y", "", "cache /tmp/<tmp>/x and /tmp/<tmp>/y"),  # all-letter names too
    ("/var/folders/ab/cd12/T/zzzz/a", "", "/var/folders/ab/cd12/T/<tmp>/a"),
    ("cannot run /tmp/my-server/run.py", "python3 /tmp/my-server/run.py", "cannot run /tmp/my-server/run.py"),
    ("(node:4242) Warning and pid 17, PID: 99", "", "(node:<pid>) Warning and pid <pid>, PID: <pid>"),
    ("took 150ms, then 1.25s; at 0x7f3a2b1c4d50; t=1733000000123", "", "took <n>ms, then <n>s; at 0x<addr>; t=<epoch>"),
    ("no answer within 60 s (phase: initialize)", "", "no answer within 60 s (phase: initialize)"),
    ("Error: ENOENT, open 'config.json' at line 12", "", "Error: ENOENT, open 'config.json' at line 12"),
])
def test_normalise_replaces_what_varies_and_keeps_what_tells(text, keep, expected):
    assert normalise(text, keep) == expected


TEXTS = hst.text(alphabet=hst.sampled_from(list("0123456789:-T_.Z /tmpidnoe()x")), max_size=60)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_normalise_is_idempotent(text):
    assert normalise(normalise(text)) == normalise(text)


# --------------------------------------------------------------------------------------------
# What a record asserts (the rewrite rule)


def _base() -> dict:
    return {"server": "s", "status": "measured", "measuredAt": "2026-11-30T03:00:00.000Z", "confirmed": True,
            "canonicalSha256": "a" * 64, "totalTokens": 10, "launchCommand": "npx -y s@1", "timeoutMs": 60000,
            "isolation": {"mode": "sandbox", "os": "linux", "arch": "x86_64", "image": None,
                          "runtimes": {"node": "v20.1.0"}, "note": "n"},
            "attempts": [{"role": "first", "budgetMs": 60000, "status": None, "evidence": None}],
            "notes": ["zero tools: the server answered tools/list with an empty array"],
            "harnessVersion": "0.1.0", "deadlineMs": 270000}


@pytest.mark.parametrize("change, same", [
    ({"measuredAt": "2026-12-21T03:00:00.000Z"}, True),
    ({"timeoutMs": 120000, "deadlineMs": 1}, True),
    ({"harnessVersion": "0.2.0"}, True),
    ({"attempts": [{"role": "first", "budgetMs": 1000, "status": "timeout", "evidence": "x"},
                   {"role": "retry", "budgetMs": 2000, "status": None, "evidence": None}],
      "notes": ["zero tools: the server answered tools/list with an empty array",
                "measured on retry 1 (attempt 2, retry at 2 s) after attempt 1 at 1 s ended timeout: x"]}, True),
    ({"isolation": {"mode": "sandbox", "os": "linux", "arch": "x86_64", "image": None,
                    "runtimes": {"node": "v20.2.0"}, "note": "other"}}, True),
    ({"canonicalSha256": "b" * 64, "totalTokens": 11}, False),
    ({"status": "dynamic"}, False),
    ({"launchCommand": "npx -y s@2"}, False),
    ({"isolation": {"mode": "docker", "os": "linux", "arch": "x86_64", "image": "i", "runtimes": {}, "note": "n"}}, False),
    ({"isolation": {"mode": "sandbox", "os": "linux", "arch": "aarch64", "image": None, "runtimes": {}, "note": "n"}}, False),
    ({"notes": []}, False),  # evidence, not narrative
])
def test_assertion_ignores_how_and_when_only(change, same):
    assert same_result(_base(), {**_base(), **change}) is same


def test_settle_keeps_the_first_taken_time_when_a_capture_gains_its_confirmation():
    unconfirmed = {**_base(), "confirmed": False}
    confirmed = {**_base(), "measuredAt": "2026-12-21T03:00:00.000Z"}
    assert settle(unconfirmed, confirmed) == {**confirmed, "measuredAt": unconfirmed["measuredAt"]}
    assert settle(confirmed, unconfirmed) is confirmed  # a single launch finding the same confirms nothing new
    assert settle(unconfirmed, {**unconfirmed, "measuredAt": "2026-12-21T03:00:00.000Z"}) is unconfirmed
