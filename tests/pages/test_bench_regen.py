"""bench/regen.py's own bookkeeping: its timed runs leave a kept build folder as built, and a cold run's reset
moves the last run's published files aside rather than deleting them (a first publish meets no fresh deletes)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_regen", ROOT / "bench" / "regen.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_reset_sets_published_files_aside_and_timed_leaves_the_build_as_built(tmp_path):
    bench = _bench()
    root = tmp_path / "12"
    root.mkdir()
    bench.build(root, 12)
    built = _tree(root)
    bench.regen(root)
    page = root / "docs" / "servers" / "server-0003.md"
    inode = page.stat().st_ino
    vectors = {p: built[str(p.relative_to(root))] for p in (root / "results").glob("*/tool-vectors.json")}
    bench._reset(root, vectors, built["history.csv"])
    assert not (root / "docs").exists() and _tree(root) == built
    kept = [p for p in (tmp_path / ".12-set-aside").rglob("server-0003.md")]
    assert [p.stat().st_ino for p in kept] == [inode]  # moved, the same file
    times = bench.timed(root, 1, baseline=None)
    assert set(times) == set(bench.RUNS)
    assert _tree(root) == built
    assert not (tmp_path / ".12-set-aside").exists()
