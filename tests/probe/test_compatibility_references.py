"""The compatibility check's references: the SDK's types are mcp.types' own objects, loaded without
the SDK's client and server, and the warm-up loads both references before the first check."""

from __future__ import annotations

import os
import subprocess
import sys

import mcp.types
import mcp_types
import pytest

from harness.probe import compatibility
from tests.conftest import REPO


def test_the_models_checked_are_the_objects_mcp_types_exports():
    for name in compatibility._MODELS.values():
        assert getattr(mcp_types, name) is getattr(mcp.types, name)


@pytest.mark.slow
@pytest.mark.parametrize("kept, loaded", [(False, ["2", "True", "False", "False"]), (True, ["0", "False", "False", "False"])],
                         ids=["no pass kept", "a pass kept"])
def test_the_warm_up_loads_both_references_unless_a_pass_is_kept_and_never_the_sdk_stack(tmp_path, kept, loaded):
    """The warm-up loads the schema's validators and the SDK's types ahead of the first check, unless this
    cache holds a kept pass (a warm machine then loads them only for a result not kept)."""
    if kept:
        (tmp_path / "compatibility-passed").mkdir()
        (tmp_path / "compatibility-passed" / ("0" * 64)).write_text("")
    script = ("import sys\nfrom harness.probe import compatibility, warmup\nwarmup.begin()\nassert warmup.finished(300)\n"
              "print(compatibility._validator.cache_info().currsize, 'mcp_types' in sys.modules, "
              "'mcp.client' in sys.modules, 'mcp' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "MCP_CONTEXT_COST_CACHE": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == loaded


def test_a_finding_from_the_sdk_types_reads_as_before():
    found = compatibility._Found()
    compatibility.check_result(found, "tools/list", {"tools": [{"name": "t", "inputSchema": "not an object"}]})
    python = [f for f in found.compatibility if compatibility.PYTHON in f.rejected_by]
    assert len(python) == 1
    assert python[0].what.startswith("tools/list is refused by the Python SDK's mcp.types.ListToolsResult: "
                                     "result.tools[0].inputSchema ")
