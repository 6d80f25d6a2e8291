"""The GitHub Action under hostile input: secrets handed to the server never reach the log,
the annotations, the outputs, the job summary or any file; a hostile server's text cannot inject
a workflow command or a raw control character; text that is not valid Unicode crashes nothing;
and a crash still writes the outputs, a summary and an ``::error`` annotation."""

from __future__ import annotations

import io
import os

import pytest

from harness.action import main as action_main
from harness.probe.redact import MASK
from tests.action.conftest import input_env, parse_outputs
from tests.conftest import fixture_command
from tests.hostile import MARKER, PASSWORD, SENTINEL, assert_file_safe, assert_safe_output, assert_secret_absent

OUTPUT_NAMES = set(action_main.OUTPUT_NAMES)
PROXY = f"http://proxyuser:{PASSWORD}@127.0.0.1:9"


def _everything(run) -> tuple[str, ...]:
    return run.stdout, run.stderr, run.summary, "\n".join(run.outputs.values())


@pytest.mark.slow
@pytest.mark.parametrize("where,code", [("describe", 0), ("error", 1), ("stderr", 1), ("noise", 0)])
def test_secrets_never_reach_the_log_outputs_summary_or_files(where, code, run_action, tmp_path):
    proof = tmp_path / "proof"
    command = fixture_command("leaks_secrets", "--leak=MY_KEY", "--leak=HTTP_PROXY", "--where", where,
                              f"--proof={proof}", "--api-key", PASSWORD)
    run = run_action({"command": command, "name": "leaky", "env": "MY_KEY"},
                     env={"MY_KEY": SENTINEL, "HTTP_PROXY": PROXY})
    assert run.code == code, run.stdout + run.stderr
    assert set(run.outputs) == OUTPUT_NAMES
    assert "MY_KEY " in proof.read_text()  # the server ran and read its environment
    record = run.record() if run.outputs["measurement-path"] else None
    if record is not None:
        assert f"--api-key {MASK}" in record["launchCommand"]
    for secret in (SENTINEL, PASSWORD):
        assert_secret_absent(secret, texts=_everything(run), roots=(run.workspace,))
    assert_safe_output(run.stdout, "the Action's log")


@pytest.mark.slow
@pytest.mark.parametrize("where,code", [("names", 0), ("error", 1), ("stderr", 1)])
def test_hostile_text_cannot_inject_commands_or_controls(where, code, run_action):
    run = run_action({"command": fixture_command("hostile_text", "--where", where), "name": "hostile",
                      "budget": "5" if where == "names" else ""})
    expected = 1 if where == "names" else code  # 'names' is measured, then fails the tiny budget
    assert run.code == expected, run.stdout + run.stderr
    assert set(run.outputs) == OUTPUT_NAMES
    assert run.outputs["status"] == ("measured" if where == "names" else "startup-failure")
    assert_safe_output(run.stdout, "the Action's log")
    assert_safe_output(run.summary, "the job summary")
    assert MARKER in run.summary  # shown, escaped, not dropped (names in the per-tool table)
    assert MARKER in run.stdout or where == "names"  # the notes quote the error and stderr
    titles = {line.split("::")[1] for line in run.errors()}
    assert titles <= {"error title=over budget", "error title=server not measured"}, titles
    for path in run.workspace.rglob("*"):
        if path.is_file():
            assert_file_safe(path)


def _environ(tmp_path, inputs: dict, **extra: str) -> dict:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    return base | {"GITHUB_WORKSPACE": str(workspace), "GITHUB_OUTPUT": str(tmp_path / "github_output"),
                   "GITHUB_STEP_SUMMARY": str(tmp_path / "step_summary")} | input_env(inputs) | extra


def test_a_crash_after_measuring_still_writes_outputs_summary_and_an_error(tmp_path, monkeypatch):
    """A fault no real server produces on demand (a bug in the summary), so it is injected — with
    a secret and control characters in its message."""
    def broken_render(*args, **kwargs):
        raise RuntimeError(f"boom {SENTINEL} \x1b]0;{MARKER}\x07\n::error::{MARKER} \ud800")

    monkeypatch.setattr(action_main, "render", broken_render)
    environ = _environ(tmp_path, {"command": fixture_command("well_behaved"), "name": "demo", "env": "MY_KEY"},
                       MY_KEY=SENTINEL)
    out = io.StringIO()
    code = action_main.run(environ, out)
    assert code == 1
    outputs = parse_outputs((tmp_path / "github_output").read_text())
    assert outputs["status"] == "measured" and outputs["tool-count"] == "2"  # what was known is written
    summary = (tmp_path / "step_summary").read_text()
    assert "The action failed: RuntimeError\\: boom \\[redacted\\]" in summary
    log = out.getvalue()
    assert f"::error title=the action failed::RuntimeError: boom {MASK} \\x1b]0;{MARKER}\\x07\\n::error::" in log
    assert_safe_output(log, "the Action's log")
    assert_safe_output(summary, "the job summary")
    assert_secret_absent(SENTINEL, texts=(log, summary), roots=(tmp_path,))


def test_an_unwritable_summary_still_writes_the_outputs(tmp_path):
    environ = _environ(tmp_path, {"command": fixture_command("well_behaved"), "name": "demo"})
    (tmp_path / "step_summary").mkdir()  # a directory: appending to it fails
    out = io.StringIO()
    assert action_main.run(environ, out) == 1
    assert parse_outputs((tmp_path / "github_output").read_text())["status"] == "measured"
    assert "::error title=cannot write GITHUB_STEP_SUMMARY::" in out.getvalue()


def test_outputs_and_summary_survive_text_that_is_not_valid_unicode(tmp_path):
    from harness.action import github

    github.write_outputs(str(tmp_path / "out"), {"a": "lone \ud800", "b": os.fsdecode(b"bad \xff byte")})
    data = (tmp_path / "out").read_bytes()
    assert b"lone \\ud800" in data and b"bad \xff byte" in data  # an OS string gets its own bytes back
    github.append_summary(str(tmp_path / "summary"), "x \ud800 y")
    assert (tmp_path / "summary").read_bytes() == b"x \\ud800 y\n"
