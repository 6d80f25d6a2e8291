"""The sweep workflow keeps its package caches between runs, for at most one ISO week:
installing a package runs its code, so a poisoned cache must not carry over."""

from __future__ import annotations

import subprocess

import yaml

from tests.conftest import REPO


def _measure_steps() -> list[dict]:
    doc = yaml.safe_load((REPO / ".github" / "workflows" / "sweep.yml").read_text())
    return doc["jobs"]["measure"]["steps"]


def test_package_caches_are_kept_keyed_by_the_iso_week_without_fallback():
    steps = _measure_steps()
    caches = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
    assert len(caches) == 1
    settings = caches[0]["with"]
    paths = settings["path"].split()
    assert {"~/.cache/mcp-context-cost/sandbox", "~/.npm", "~/.cache/uv"} <= set(paths)
    assert "restore-keys" not in settings  # a key from an earlier week is never restored
    assert settings["key"].endswith("-${{ steps.week.outputs.week }}")
    assert "${{ matrix.shard }}" in settings["key"]  # each shard measures its own servers
    week = next(s for s in steps if s.get("id") == "week")
    names = [s.get("name") or s.get("uses") for s in steps]
    assert names.index(week["name"]) < names.index(caches[0]["uses"]) < names.index("Measure this shard of the slice")
    # the key's week is the ISO week (year of the week, not of the day: 2026-12-31 is 2026-W53)
    command = week["run"].split("$(", 1)[1].split(")", 1)[0]
    out = subprocess.run(["bash", "-c", command.replace("date -u", "date -u -d 2027-01-01")],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "2026-W53"
