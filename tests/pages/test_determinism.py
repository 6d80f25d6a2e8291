"""Same records and history → byte-identical published files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.pages.regen import regen
from tests.conftest import REPO
from tests.pages import scenario


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and (p.parts[-2] in ("servers", "sparklines", "trends")
                                                                 or p.name in ("index.html", "leaderboard.md", "leaderboard.csv"))}


def test_regen_twice_is_byte_identical(published):
    root, _, written = published
    first = snapshot(root)
    mtimes = {p: p.stat().st_mtime_ns for p in written}
    assert regen(root) == written
    assert snapshot(root) == first
    assert {p: p.stat().st_mtime_ns for p in written} == mtimes  # unchanged files are not rewritten
    assert len(first) == 3 + 4 * 11  # per entry: page (.md and .html), sparkline, trend chart


@pytest.mark.slow  # two more regens, each in a fresh interpreter
def test_independent_roots_and_hash_seeds_agree(tmp_path, published):
    root, _, _ = published
    expected = snapshot(root)
    for seed in ("1", "2"):
        other = tmp_path / f"copy-{seed}"
        other.mkdir()
        scenario.build(other)
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "harness.cli", "regen", "--root", str(other)] if _cli_has_regen()
                       else [sys.executable, "-c", "import sys; from pathlib import Path; "
                             "from harness.pages.regen import regen; regen(Path(sys.argv[1]))", str(other)],
                       check=True, env=env, cwd=REPO, capture_output=True)
        assert snapshot(other) == expected


def test_no_timestamps_or_paths_in_output(published, _published_once):
    root, _, _ = published
    built_in = _published_once[0]  # the folder regen ran in; ``root`` is a copy of it
    for name, data in snapshot(root).items():
        text = data.decode("utf-8")
        assert str(built_in) not in text and str(root) not in text, name
        assert "2026-11-30T12:00:00.000Z" not in text or name.endswith((".md", ".csv")) or \
            name.startswith("docs/servers/"), name  # the HTML server pages render the Markdown ones


def _cli_has_regen() -> bool:
    from harness.cli import COMMAND_MODULES

    return "harness.cli.regen_cmd" in COMMAND_MODULES


def test_stale_removal_only_touches_generated_kinds(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    scenario.build(root)
    keep = root / "docs/servers/README.txt"
    keep.write_text("not generated\n", encoding="utf-8")
    regen(root)
    assert keep.exists()
    shutil.rmtree(root / "results/alpha")
    regen(root)
    assert "not-yet-run" in (root / "docs/servers/alpha.md").read_text(encoding="utf-8")
