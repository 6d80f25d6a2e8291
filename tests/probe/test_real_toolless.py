"""A server without tools, on a real package: ``mcp-llms-txt`` 0.2.0 (PyPI) is a resources-only server built
on the official Python SDK 1.x. Its initialize declares ``resources`` and ``experimental`` only, and
``tools/list`` gets -32601. It is measured as zero tools with the capability note, never a
startup-failure. The SDK it needs is pinned with ``--with``: the package predates ``mcp`` 2."""

from __future__ import annotations

import pytest

from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, nothing_left, results_root  # noqa: F401

COMMAND = ("uvx --from mcp-llms-txt==0.2.0 --with mcp==1.9.4 --with pydantic==2.11.7 --with httpx==0.28.1 "
           "mcp-llms-txt")


@pytest.mark.slow
def test_mcp_llms_txt_is_zero_tools_with_the_capability_note(results_root):
    run = measure_and_write(Target(name="mcp-llms-txt", command=COMMAND, timeout_seconds=120), results_root,
                            isolation="host")
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["toolCount"] == 0 and rec["rawToolsCapture"] == [] and rec["totalTokens"] == 1  # "[]"
    assert rec["declaredToolsCapability"] is False and rec["serverName"] == "mcp-llms-txt"
    assert ("zero tools: the server declares no tools capability at initialize (capabilities: experimental, "
            "resources) and answered tools/list with JSON-RPC error -32601 ('Method not found')") in run.notes
    assert len(run.measurement.attempts) == 2 and all(a.ok for a in run.measurement.attempts)
