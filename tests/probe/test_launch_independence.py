"""The two launches of a measurement are independent even when they run at once:
neither sees what the other left in its working directory. The fixture lists
3 tools instead of 2 when another launch's file appears beside it (``shares_workdir``)."""

from __future__ import annotations

import shutil

import pytest

from harness.probe.measure import measure_sync
from harness.probe.target import Target
from tests.conftest import fixture_command

ISOLATIONS = ["host"] + (["sandbox"] if shutil.which("bwrap") else [])


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("needs_git", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_the_confirmation_never_sees_the_first_launchs_files(isolation, needs_git, monkeypatch, tmp_path):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    target = Target(name="shares-workdir", command=fixture_command("shares_workdir", "--wait", "3"),
                    timeout_seconds=30, needs_git=needs_git)
    m = measure_sync(target, isolation=isolation)
    assert m.status == "measured", m.notes
    assert m.confirmed is True
    assert [len(c.tools) for c in m.attempts if c.ok] == [2, 2]
