"""A sweep counts launches, not entries: every launch and every package
resolution takes a slot of one gate, so ``--concurrency N`` means N launches at once however
many launches each measurement makes."""

from __future__ import annotations

import asyncio
import datetime as dt
import io

import pytest

from harness.db import sweep as sweep_module
from harness.db.catalog import load_catalog
from harness.db.launch_gate import LaunchGate, entries_in_flight
from harness.db.progress import Progress
from harness.db.journal import Staging
from harness.probe import install, launch
from tests.db.sweeprepo import catalog_text, fixture, init_repo


def test_a_gate_never_runs_more_than_its_slots():
    async def main():
        gate = LaunchGate(2)
        release = asyncio.Event()
        seen = []

        async def launcher(i):
            seen.append(gate.running)
            await release.wait()
            return i

        tasks = [asyncio.ensure_future(gate.wrap(launcher)(i)) for i in range(6)]
        for _ in range(20):
            await asyncio.sleep(0)
        assert gate.running == 2 and len(seen) == 2  # four wait for a slot
        release.set()
        assert await asyncio.gather(*tasks) == list(range(6))
        assert gate.running == 0 and gate.peak == 2 and max(seen) <= 2

    asyncio.run(main())
    with pytest.raises(ValueError):
        LaunchGate(0)
    assert [entries_in_flight(n) for n in (1, 2, 8)] == [1, 3, 12]


@pytest.mark.slow
def test_sweep_holds_launches_not_entries_to_its_concurrency(tmp_path, monkeypatch):
    """Five servers answering after 0.4 s, two launches each, ``concurrency=2``: at most two
    launches run at any moment, and both slots are used."""
    entries = [(f"slow{i}", fixture("slow_start", "--delay", "0.4")) for i in range(5)]
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    running, peak, launches = [0], [0], [0]
    real = launch.launch_once

    async def counted(*args, **kwargs):
        running[0] += 1
        launches[0] += 1
        peak[0] = max(peak[0], running[0])
        try:
            return await real(*args, **kwargs)
        finally:
            running[0] -= 1

    monkeypatch.setattr(launch, "launch_once", counted)
    catalog = load_catalog(root / "servers.yaml")
    result = asyncio.run(sweep_module.sweep(
        list(catalog.entries), root, Staging(root, "gate-test"), dt.date.today(), concurrency=2,
        progress=Progress(io.StringIO(), live=False), isolation_mode="host"))
    assert {rec["status"] for rec in result.records.values()} == {"measured"}
    assert launches[0] == 10  # a first launch and a confirmation each
    assert peak[0] == 2


def test_sweep_resolves_in_a_slot_and_falls_back_when_resolution_fails(tmp_path, monkeypatch):
    """The install step runs inside a slot; a command with nothing to install is measured as it is."""
    entries = [("plain", fixture("well_behaved", "--tools", "3"))]
    root = init_repo(tmp_path / "repo", catalog_text(entries))
    seen = []

    real_install = install.install

    async def spying_install(target, mode, **kwargs):
        seen.append((target.name, mode, kwargs.get("pass_declared_values")))
        return await real_install(target, mode, **kwargs)  # a fixture command: nothing to install

    monkeypatch.setattr(install, "install", spying_install)
    catalog = load_catalog(root / "servers.yaml")
    result = asyncio.run(sweep_module.sweep(
        list(catalog.entries), root, Staging(root, "gate-test"), dt.date.today(), concurrency=1,
        progress=Progress(io.StringIO(), live=False), isolation_mode="host"))
    assert seen == [("plain", "host", False)]  # no declared value reaches a catalog server's resolution
    rec = result.records["plain"]
    assert rec["status"] == "measured" and "resolvedPackage" not in rec
