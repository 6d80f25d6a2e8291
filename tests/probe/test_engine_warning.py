"""An install that warned the package wants a newer Node than this machine's: the warning decides the
status only when the server then failed without words of its own (or the warning is about the package
itself); a server that listed its tools on this Node is measured — or dynamic, or asks for a credential —
and the warning is a note beside it, never lost."""

from __future__ import annotations

import pytest

from harness.probe import build_record, machine_fault, node_engine
from harness.probe import install as installing
from harness.probe.measure import measure_sync
from harness.probe.target import Target
from tests.conftest import fixture_command

COLD = "npm EBADENGINE: @acme/other-dep@2.0.0 requires node >=22; this machine has v20.20.2"
WARM = "@acme/server@1.0.0 declares engines.node '>=22'; this machine has v20.20.2"


def _record(fixture: list[str], finding: str, name: str = "engine", **kwargs) -> dict:
    target = Target(name=name, command=fixture_command(*fixture), timeout_seconds=5, **kwargs)
    done = installing.Install(target, findings=(finding,))
    return build_record.build(measure_sync(target, isolation="host", installed=done, dual=kwargs.pop("dual", True)))


@pytest.mark.parametrize("fixture, status, finding", [
    (["well_behaved"], "measured", COLD),
    (["well_behaved"], "measured", WARM),
    (["needs_api_key"], "auth-required", COLD),
    (["needs_api_key"], "auth-required", WARM),
    # failed in words of its own (on stdout), and the warning is about another package
    (["exits_before_reply", "stdout-usage"], "startup-failure", COLD),
])
def test_the_engine_warning_is_a_note_beside_a_status_the_server_decided(fixture, status, finding):
    rec = _record(fixture, finding)
    assert rec["status"] == status, rec["notes"]
    assert f"the install warned: {finding}" in rec["notes"], rec["notes"]
    assert "environmentCause" not in rec


def test_the_engine_warning_is_a_note_beside_a_dynamic_tool_set():
    rec = _record(["volatile", "--fresh-name"], WARM)  # new tools at every launch, whatever their order
    assert rec["status"] == "dynamic", rec["notes"]
    assert f"the install warned: {WARM}" in rec["notes"]


@pytest.mark.parametrize("fixture, finding", [
    (["exits_before_reply", "silent"], COLD),  # no words of its own: the warning is the only evidence
    (["exits_before_reply", "silent"], WARM),
])
def test_a_failure_the_engine_explains_is_not_measured_here(fixture, finding):
    rec = _record(fixture, finding)
    assert rec["status"] == "not-measured-here", rec["notes"]
    assert rec["environmentCause"] == machine_fault.RUNTIME_VERSION and rec["environmentEvidence"] == finding


@pytest.mark.slow
def test_a_real_server_listing_its_tools_below_its_declared_node_is_measured_with_the_warning(tmp_path, monkeypatch):
    """@mapbox/mcp-devkit-server 0.8.2 declares engines.node >=22 and lists its 23 tools on Node 20."""
    if (node_engine.node_version() or (99,)) >= (22,):
        pytest.skip("this machine's Node meets the requirement")
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "harness-cache"))
    target = Target(name="mapbox-devkit", command="npx -y @mapbox/mcp-devkit-server@0.8.2", timeout_seconds=60)
    said = []
    for _ in ("cold", "warm"):  # a cold install and a warm one say the same, from what is installed
        rec = build_record.build(measure_sync(target, isolation="sandbox", pass_declared_values=False, dual=False))
        assert rec["status"] == "measured" and rec["toolCount"] == 23, rec["notes"]
        said.append([n for n in rec["notes"] if n.startswith("the install warned: ")])
        assert "environmentCause" not in rec
    assert said[0] == said[1] and len(said[0]) == 1 and "declares engines.node '>=22'" in said[0][0], said
