"""What a server says reaches terminals, CI logs and published
files only through ``harness.util.untrusted`` — and output never fails on text that is not valid
Unicode.

``tests/fixtures/servers/hostile_text.py`` puts newline-then-``::error``, the legacy ``##[error]``,
ANSI CSI, OSC 0 (title), OSC 52 (clipboard), the C1 CSI, DEL, NUL, bidi overrides and isolates,
the line separator, a no-break space before ``::``, tag characters and lone surrogates into tool
names, serverInfo, instructions, a JSON-RPC error message and stderr. ``measure`` and ``verify``
must exit normally, print no raw control character and no line the runner would read as a
workflow command, and write files with none either — while the published capture still holds
every character exactly (it re-derives byte for byte).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.core.jsparse import parse
from harness.util import untrusted
from tests.conftest import fixture_command
from tests.hostile import MARKER, assert_file_safe, assert_safe_output
from tests.probe.helpers import assert_no_traceback, nothing_left, results_root, run_cli  # noqa: F401

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


def measure(results_root: Path, name: str, where: str):
    done = run_cli("measure", "--command", fixture_command("hostile_text", "--where", where), "--name", name,
                   "--results", str(results_root / "results"), "--badges", str(results_root / "badges"),
                   "--timeout", "5", "--isolation", "host")
    assert_no_traceback(done)
    assert_safe_output(done.stdout, "measure's stdout")
    assert_safe_output(done.stderr, "measure's stderr")
    path = results_root / "results" / name / "measurement.json"
    assert path.is_file(), done.stdout + done.stderr
    assert_file_safe(path)
    return done, path


@pytest.mark.slow
def test_hostile_tool_names_and_server_info_are_escaped_in_measure_output(results_root):
    done, path = measure(results_root, "hostile-names", "names")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hostile-names: measured — " in done.stdout
    record = parse(path.read_text(encoding="utf-8"))
    largest = sorted(record["tools"], key=lambda t: (-t["tokens"], t["name"]))[:5]
    for tool in largest:  # each shown with its escapes visible, e.g. "t04 \x1b]0;pwned window title\x07"
        assert f"  {untrusted.escape(tool['name'])}" in done.stdout, (tool["name"], done.stdout)
    names = [tool["name"] for tool in record["rawToolsCapture"]]
    assert names[12] == "t12 pwned lone \ud800 high" and names[4] == "t04 \x1b]0;pwned window title\x07"
    assert record["serverName"].startswith("\n::error title=pwned")  # kept exactly, escaped only when shown
    assert "\\u009b" in path.read_text(encoding="utf-8")  # written as an escape, parsed back as U+009B
    verify = run_cli("verify", str(path))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert_safe_output(verify.stdout + verify.stderr, "verify's output")


# Each measures and verifies a hostile server: one shape in the fast loop, every shape in the full suite.
@pytest.mark.parametrize("where", ["error", pytest.param("stderr", marks=pytest.mark.slow)])
def test_hostile_error_messages_and_stderr_are_escaped(where, results_root):
    done, path = measure(results_root, f"hostile-{where}", where)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "startup-failure" in done.stdout and MARKER in done.stdout
    record = parse(path.read_text(encoding="utf-8"))
    assert record["status"] == "startup-failure"
    if where == "stderr":  # invalid UTF-8 from the server was replaced, never a crash
        assert "\ufffd" in record["stderrTail"] and "\x1b]52;" in record["stderrTail"]


def _hostile_record(results_root: Path) -> dict:
    path = results_root / "results" / "hostile-names" / "measurement.json"
    if not path.is_file():
        measure(results_root, "hostile-names", "names")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("field,value", [
    ("totalTokens", "\x1b]0;pwned\x07\n::error::pwned"),
    pytest.param("canonicalSha256", "##[error]pwned \u202e\ud800", marks=pytest.mark.slow),
    pytest.param("toolCount", "\u00a0::warning::pwned \x9b2J", marks=pytest.mark.slow),
])
@pytest.mark.slow
def test_verify_escapes_hostile_published_values(field, value, results_root, tmp_path):
    record = _hostile_record(results_root)
    record[field] = value
    path = tmp_path / "measurement.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    for args in ((str(path),), (str(path), "--json")):
        done = run_cli("verify", *args)
        assert_no_traceback(done)
        assert done.returncode in (1, 2), done.stdout + done.stderr
        assert_safe_output(done.stdout + done.stderr, "verify's output")
        assert MARKER in done.stdout + done.stderr or args[-1] == "--json"


def test_verify_escapes_a_hostile_source_name(tmp_path):
    source = "\x1b]0;pwned\x07\n::error::pwned \u202e.json"
    if os.name != "posix":
        pytest.skip("a file name holding control characters")
    for args in ((str(tmp_path / source),), (str(tmp_path / source), "--json")):
        done = run_cli("verify", *args)
        assert done.returncode == 2
        assert_safe_output(done.stdout + done.stderr, "verify's output")
