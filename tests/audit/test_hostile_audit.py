"""Untrusted text in ``audit``'s three output forms, beyond what one line can carry.

* text: a folded or wrapped line must not bring an untrusted ``::error::`` to the start of a line;
* JSON (stdout or file): C1, bidi and lone surrogates are escaped, and the report is still written.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.audit.conftest import report_of, run_audit
from tests.conftest import FIXTURE_SERVERS
from tests.hostile import assert_file_safe, assert_safe_output

WELL = [sys.executable, str(FIXTURE_SERVERS / "well_behaved.py")]
LONE = "big \ud800 lone"
TOOLS = [{"name": LONE, "description": "word " * 300, "inputSchema": {"type": "object"}}]
NAMES = [
    "x" * 24 + "::error::pwned folded in the table",  # the server column folds at 24
    "srv " + "a" * 20 + " ::warning::pwned wrapped in the table",  # ... and wraps between words
    "w" * 94 + " ::error title=t::pwned wrapped by textwrap",  # the session line wraps at 100
    "\x9b31m C1 \u202e bidi pwned",
]


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    """A config of hostile names (one server behind them all) and a server whose heaviest tool's
    name holds a lone surrogate."""
    root = tmp_path_factory.mktemp("hostile-audit")
    (root / "home").mkdir()
    servers = {name: {"command": WELL[0], "args": WELL[1:]} for name in NAMES}
    tool_list = [sys.executable, str(FIXTURE_SERVERS / "tool_list.py"), "--tools-json", json.dumps(TOOLS)]
    servers["lone"] = {"command": tool_list[0], "args": tool_list[1:]}
    path = root / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, ensure_ascii=False, indent=2), encoding="utf-8")
    return root


def audit(config, *args: str):
    done = run_audit(["--no-discover", "--config", str(config / "mcp.json"), "--single", *args], config, config / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.mark.slow
def test_the_text_report_never_starts_a_line_with_untrusted_text(config):
    done = audit(config)
    assert "pwned" in done.stdout and "\\x9b31m" in done.stdout
    assert_safe_output(done.stdout, "audit's text report")
    assert_safe_output(done.stderr, "audit's progress")


@pytest.mark.slow
def test_the_json_report_is_safe_and_keeps_every_value(config):
    done = audit(config, "--json")
    assert_safe_output(done.stdout, "audit --json")
    report = report_of(done.stdout)
    assert sorted(s["name"] for s in report["configs"][0]["servers"]) == sorted(NAMES + ["lone"])
    assert any(t["tool"] == LONE for t in report["configs"][0]["heaviestTools"])


@pytest.mark.slow
def test_the_report_files_are_safe(config, tmp_path):
    audit(config, "--json", str(tmp_path / "a.json"), "--markdown", str(tmp_path / "a.md"))
    for path in (tmp_path / "a.json", tmp_path / "a.md"):
        assert_file_safe(path)
    report = report_of((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert any(t["tool"] == LONE for t in report["configs"][0]["heaviestTools"])
