"""Secrets by less obvious paths and spellings:

* an exception carrying a secret reaches the internal-error line and the traceback redacted, with
  the secrets of the measurement it left;
* a secret made only of digits, echoed as a JSON *number* (a schema ``default``, an ``enum``), is
  redacted;
* a JSON-escaped secret holding a character outside the BMP (``\\ud83d\\udd11``) is found even
  when the pieces between such characters are shorter than a run.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from harness.cli import main
from harness.core.rederive import rederive
from harness.probe import harness_bug
from harness.probe.redact import MASK, Secrets
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.hostile import SENTINEL, assert_safe_output, assert_secret_absent
from tests.probe.helpers import measure_and_write, nothing_left, results_root  # noqa: F401

NAME = "MY_API_KEY"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["harness.probe.build_record.build", "harness.cli.measure_cmd.measure_sync"])
@pytest.mark.parametrize("traceback", [False, True])
def test_the_internal_error_line_and_traceback_never_show_a_secret(where, traceback, tmp_path, monkeypatch):
    monkeypatch.setenv(NAME, SENTINEL)
    if traceback:
        monkeypatch.setenv(harness_bug.TRACEBACK_ENV, "1")
    else:
        monkeypatch.delenv(harness_bug.TRACEBACK_ENV, raising=False)

    def boom(*args, **kwargs):
        raise KeyError(f"no tool named 'x' (the server said: key={SENTINEL}\n::error::pwned)")

    monkeypatch.setattr(where, boom)
    code, out, err = _run("measure", "--command", fixture_command("well_behaved"), "--env", NAME, "--name", "buggy",
                          "--isolation", "host", "--single", "--results", str(tmp_path / "r"),
                          "--badges", str(tmp_path / "b"))
    assert code == harness_bug.EXIT_CODE
    assert "internal error: a bug in mcp-context-cost" in err and MASK in err
    assert ("Traceback" in err) == traceback
    assert_secret_absent(SENTINEL, texts=(out, err))
    assert_safe_output(err, "the internal-error report")


@pytest.mark.parametrize("value", ["48213950771", "3141592653589793"])
def test_a_numeric_secret_echoed_as_a_number_is_redacted(value, results_root, monkeypatch):
    monkeypatch.setenv(NAME, value)
    tools = [{"name": "account", "description": "Reads your account.",
              "inputSchema": {"type": "object", "properties": {"id": {"type": "integer", "default": int(value),
                                                                      "enum": [int(value), 7]}}}}]
    target = Target(name=f"numeric-{len(value)}", command=fixture_command("tool_list", "--tools-json", json.dumps(tools)),
                    env=(NAME,), timeout_seconds=30)
    run = measure_and_write(target, results_root, dual=False)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    schema = rec["rawToolsCapture"][0]["inputSchema"]["properties"]["id"]
    assert schema["default"] == MASK and schema["enum"] == [MASK, 7]
    assert "redacted before counting" in run.notes
    assert value not in run.path.read_text() and value[:8] not in run.path.read_text()
    assert rederive(rec).ok


@pytest.mark.parametrize("secret", ["ab🔑cdefgh🔑ij🔑kl", "🔑" * 6, "pässwörd-𝔘𝔫𝔦-x"])
def test_a_json_escaped_secret_with_astral_characters_is_found(secret):
    secrets = Secrets([secret])
    for text in (json.dumps(secret), json.dumps({"k": "v " + secret})):
        clean = secrets.text(f"echo {text} end")
        assert MASK in clean and "\\ud83d\\udd11" not in clean.replace(MASK, ""), clean
        assert clean.startswith("echo ") and clean.endswith(" end")
