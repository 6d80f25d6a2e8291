"""The sweep workflow's plan and package caches: the matrix comes from the slice, and each shard
reuses only a cache saved for exactly its servers and launches, by the same cache code, this month."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "sweep.yml"


def _job(name: str) -> dict:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"][name]


def _outputs(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def test_package_caches_are_keyed_by_the_shards_packages_without_fallback():
    steps = _job("measure")["steps"]
    caches = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
    assert len(caches) == 1
    settings = caches[0]["with"]
    # the per-server folders alone: no cache shared between servers (~/.npm, ~/.cache/uv) is kept
    assert settings["path"].split() == ["~/.cache/mcp-context-cost/sandbox/servers"]
    assert "restore-keys" not in settings  # only an exact key is ever restored
    key = " ".join(settings["key"].split())
    for part in ("${{ matrix.packages }}", "${{ steps.month.outputs.month }}", "hashFiles('harness/probe/sandbox.py'",
                 "'harness/probe/install.py'", "'harness/probe/npx_cache.py'"):
        assert part in key
    month = next(s for s in steps if s.get("id") == "month")
    names = [s.get("name") or s.get("uses") for s in steps]
    assert names.index(month["name"]) < names.index(caches[0]["uses"]) < names.index("Measure this shard of the slice")
    command = month["run"].split("$(", 1)[1].split(")", 1)[0]
    out = subprocess.run(["bash", "-c", command.replace("date -u", "date -u -d 2027-01-01")],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "2027-01"


def _catalog(path: Path, count: int) -> Path:
    entries = [{"name": "memory", "command": "npx -y @modelcontextprotocol/server-memory@2026.8.31",
                "category": "memory"}]
    entries += [{"name": f"s{i:04d}", "command": f"npx -y pkg-{i}@1.0.{i}", "category": "other"}
                for i in range(count - 1)]
    path.write_text(yaml.safe_dump({"cycleWeeks": 1, "reference": "memory", "servers": entries}))
    return path


@pytest.mark.parametrize("count", [1, 46, 47, 500, pytest.param(5000, marks=pytest.mark.slow)])  # 5000: seconds of CPU
def test_the_plan_step_sizes_the_matrix_from_the_slice(tmp_path, count):
    """The plan job's own script, run against catalogs of several sizes: every shard fits, the
    matrix covers the slice once, and no shard count is a constant."""
    from harness.db import shards

    step = next(s for s in _job("plan")["steps"] if s.get("id") == "size")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    cli = bin_dir / "mcp-context-cost"
    cli.write_text(f"#!/bin/sh\nexec {sys.executable} -m harness.cli \"$@\" --catalog {_catalog(tmp_path / 'servers.yaml', count)}\n")
    cli.chmod(0o755)
    out, summary = tmp_path / "out", tmp_path / "summary"
    env = {**os.environ, "DATE": "2026-11-30", "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(out),
           "GITHUB_STEP_SUMMARY": str(summary), "PYTHONPATH": str(REPO)}
    subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, env=env, check=True, timeout=120)
    outputs = _outputs(out.read_text())
    rows = json.loads(outputs["matrix"])["include"]
    assert int(outputs["shards"]) == len(rows) == shards.count(count)
    assert [r["shard"] for r in rows] == list(range(1, len(rows) + 1))
    assert sum(r["servers"] for r in rows) == count
    assert max(r["servers"] for r in rows) <= shards.per_shard()
    assert len({r["packages"] for r in rows}) == len(rows)
    assert f"{count} servers in {len(rows)} shard(s)" in summary.read_text()
