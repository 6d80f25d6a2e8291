"""Target and measurement options: ``cwd`` (the Action's working-directory) and limits from the
environment. A target with ``cwd`` launches in that directory, so a
relative command like ``python3 server.py`` resolves against the author's checkout."""

from __future__ import annotations

import shutil

import pytest

from harness.probe.measure import measure_sync
from harness.probe.target import Target
from tests.conftest import FIXTURE_SERVERS


@pytest.mark.slow
def test_relative_command_runs_in_target_cwd(tmp_path):
    for name in ("well_behaved.py", "_mcp.py"):
        shutil.copy(FIXTURE_SERVERS / name, tmp_path / name)
    relative = Target(name="rel", command="python3 well_behaved.py --tools 3", timeout_seconds=10)
    assert measure_sync(relative, dual=False).status == "startup-failure"  # fresh temp dir: no such file
    inside = Target(name="rel", command="python3 well_behaved.py --tools 3", timeout_seconds=10, cwd=str(tmp_path))
    measurement = measure_sync(inside, dual=False)
    assert measurement.status == "measured" and len(measurement.capture.tools) == 3
    assert {"_mcp.py", "well_behaved.py"} <= {p.name for p in tmp_path.iterdir()}  # the checkout is not replaced


def test_limits_are_configurable_by_environment():
    import pytest

    from harness.probe.limits import DEFAULT_LIMITS, from_env

    assert from_env({}) == DEFAULT_LIMITS
    assert from_env({"MCP_CONTEXT_COST_MAX_PAGES": "3"}).max_pages == 3
    with pytest.raises(ValueError, match="MCP_CONTEXT_COST_MAX_MESSAGE_BYTES"):
        from_env({"MCP_CONTEXT_COST_MAX_MESSAGE_BYTES": "big"})


def test_page_cap_from_environment_ends_infinite_pagination(monkeypatch):
    from tests.conftest import fixture_command

    monkeypatch.setenv("MCP_CONTEXT_COST_MAX_PAGES", "7")
    measurement = measure_sync(Target(name="pages", command=fixture_command("infinite_pages"), timeout_seconds=10),
                               dual=False)
    assert measurement.status == "startup-failure"
    assert "more than 7 tools/list pages" in measurement.notes[0]
