"""Every refusal kind names what it is about, and the posture sentence never contradicts the
readings it lists: an unreadable ``~/.claude.json`` or ``.mcp.json`` refuses the session as
``mcp-config-unreadable`` (never ``managed-mcp-unreadable``); a false
``CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS`` is named, never "nothing sets the three variables"."""

from __future__ import annotations

import pytest

from harness.audit import deferral as d
from harness.audit.claude_settings import LOCAL, SHELL, USER, Place
from harness.audit.model import READ
from tests.audit.test_sessions import audit, claude, write_managed


@pytest.mark.parametrize("which, content", [
    (".mcp.json", "{not json"), (".mcp.json", None), ("~/.claude.json", "[1, 2"), ("~/.claude.json", None),
])
def test_an_unreadable_member_file_is_refused_by_its_own_kind(machine, which, content):
    path = machine.cwd / ".mcp.json" if which == ".mcp.json" else machine.home / ".claude.json"
    if content is None:  # a directory where the file should be: exists, cannot be read
        path.unlink()
        path.mkdir()
    else:
        path.write_text(content)
    session = claude(audit(machine))
    kinds = [r["kind"] for r in session["deferral"]["refusals"]]
    assert d.MCP_CONFIG_UNREADABLE in kinds and d.MANAGED_MCP_UNREADABLE not in kinds, kinds
    refusal = next(r for r in session["deferral"]["refusals"] if r["kind"] == d.MCP_CONFIG_UNREADABLE)
    assert which in refusal["detail"] and session["total"] is None


def test_an_unreadable_managed_file_keeps_its_own_kind(machine):
    write_managed(machine, "{not json")
    kinds = [r["kind"] for r in claude(audit(machine))["deferral"]["refusals"]]
    assert kinds.count(d.MANAGED_MCP_UNREADABLE) == 1 and d.MCP_CONFIG_UNREADABLE not in kinds


@pytest.mark.parametrize("value", ["0", "false", "off", "No"])
@pytest.mark.parametrize("tier, name", [(SHELL, "shell"), (LOCAL, ".claude/settings.local.json"),
                                        (USER, "~/.claude/settings.json")])
def test_a_false_ccdeb_is_named_in_the_sentence(value, tier, name):
    place = Place(name, tier, READ, env={d.CCDEB: value})
    posture = d.resolve([place] if tier == SHELL else [Place("shell", SHELL, READ), place])
    assert posture.kind == d.DEFERRED
    assert "nothing sets" not in posture.reason and d.CCDEB in posture.reason and name in posture.reason
    assert posture.decided_by == f"{d.CCDEB} in {name}"


def test_nothing_set_still_says_so():
    posture = d.resolve([Place("shell", SHELL, READ)])
    assert posture.reason.startswith("nothing sets the three variables")
