"""Internal errors are not bad input. A bug in the harness cannot be produced by a
server on demand once it is fixed, so these tests inject one where the harness would raise it
(the measurement, the record builder) and check what the user gets: exit code 70 and one line that
names the server (``measure``), or that server's recorded harness error while the sweep goes on."""

from __future__ import annotations

import contextlib
import io

import pytest

from harness.cli import main
from harness.probe import harness_bug
from harness.probe.target import Target
from tests.conftest import fixture_command


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _measure_args(tmp_path, name: str = "buggy") -> list[str]:
    return ["measure", "--command", fixture_command("well_behaved"), "--name", name, "--isolation", "host", "--single",
            "--results", str(tmp_path / "results"), "--badges", str(tmp_path / "badges")]


@pytest.mark.parametrize("where,exc", [
    ("harness.cli.measure_cmd.measure_sync", IndexError("list index out of range")),  # a LookupError: once exit 2
    ("harness.probe.build_record.build", KeyError("tools")),
    ("harness.cli.measure_cmd.measure_sync", ValueError("bad state")),  # a ValueError from inside is not bad input
])
@pytest.mark.slow
def test_a_bug_inside_measure_exits_70_with_one_line_naming_the_server(where, exc, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(where, boom)
    monkeypatch.delenv(harness_bug.TRACEBACK_ENV, raising=False)
    code, out, err = _run(*_measure_args(tmp_path))
    assert code == harness_bug.EXIT_CODE == 70
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("internal error: a bug in mcp-context-cost while working on server 'buggy'")
    assert f"{type(exc).__name__}: " in lines[0] and "Traceback" not in err
    assert not (tmp_path / "results").exists()  # nothing half-written


def test_the_traceback_is_printed_only_when_asked(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise IndexError("list index out of range")

    monkeypatch.setattr("harness.cli.measure_cmd.measure_sync", boom)
    monkeypatch.setenv(harness_bug.TRACEBACK_ENV, "1")
    code, _, err = _run(*_measure_args(tmp_path))
    assert code == 70
    assert err.startswith("Traceback (most recent call last):") and "IndexError" in err
    assert err.splitlines()[-1].startswith("internal error: a bug in mcp-context-cost")


def test_the_line_escapes_what_the_exception_carries(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("server said\n::error ::owned\x1b]0;title\x07")

    monkeypatch.setattr("harness.cli.measure_cmd.measure_sync", boom)
    code, _, err = _run(*_measure_args(tmp_path))
    assert code == 70
    assert err.count("\n") == 1 and "\x1b" not in err and "\x07" not in err
    assert not any(line.startswith("::") for line in err.splitlines())


def test_bad_input_is_still_exit_2(tmp_path):
    code, _, err = _run("measure", "--command", "python3 x.py", "--name", "Bad Name", "--results", str(tmp_path))
    assert code == 2 and err.startswith("error: --name 'Bad Name' is not a valid slug")


@pytest.mark.slow
def test_a_bug_on_one_server_is_its_recorded_harness_error_and_the_sweep_goes_on(tmp_path, monkeypatch):
    from harness.core.jsparse import parse
    from harness.db import sweep as sweep_module
    from tests.db.sweeprepo import catalog_text, history_rows, init_repo, sweep, well_behaved

    real = sweep_module.measure

    async def measure(target: Target, **kwargs):
        if target.name == "buggy":
            raise IndexError("list index out of range")
        return await real(target, **kwargs)

    monkeypatch.setattr(sweep_module, "measure", measure)
    root = init_repo(tmp_path / "repo", catalog_text([("good", well_behaved(3)), ("buggy", well_behaved(4)),
                                                     ("also-good", well_behaved(5))]))
    code, _, err = sweep(root, "--all", "--isolation", "host")
    assert code == 0, err
    good = parse((root / "results/good/measurement.json").read_text(encoding="utf-8"))
    buggy = parse((root / "results/buggy/measurement.json").read_text(encoding="utf-8"))
    assert good["status"] == "measured"
    assert buggy["status"] == "not-yet-run" and buggy["totalTokens"] is None
    assert buggy["harnessError"] == "IndexError: list index out of range"
    assert buggy["notes"][0].startswith("harness error: a bug in mcp-context-cost ended this measurement")
    assert parse((root / "badges/buggy.json").read_text(encoding="utf-8"))["message"] == "not-yet-run"
    assert {r["server"]: r["status"] for r in history_rows(root)} == {
        "good": "measured", "buggy": "not-yet-run", "also-good": "measured"}
