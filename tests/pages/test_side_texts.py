"""The texts no server file is drawn from (the boards, the regressions report, the capture index;
harness/pages/regen.py ``_Side``) are rendered in the regen process while workers draw the server files:
the run writes what a run in one process writes, and an error rendering them stops the run with nothing
written, the workers ended. Each regen runs in a fresh process: a thread of the test process (xdist, a
tokenizer pool) would keep it from forking."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.util import forkpool
from tests.pages import builders as b

TOOLS = [[b.tool("alpha")], [b.tool("beta", "Finds another thing."), b.tool("gamma")]]
NAMES = [f"srv-{n}" for n in range(6)]


# regen(ROOT) with server_html.PARALLEL_FROM set; prints the workers alive while the capture index was
# rendered, the error (FAIL: "index" or "boards" raise there) and the workers left after the run.
_RUN = """
import json, multiprocessing, sys
from pathlib import Path
from harness.pages import leaderboard, regen, server_html

root, server_html.PARALLEL_FROM, fail = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
beside = []
real = regen._capture_index

def spy(*args):
    beside.append(len(multiprocessing.active_children()))
    if fail == "index":
        raise ValueError("the index broke")
    return real(*args)

def broken(*args):
    raise ValueError("the leaderboard broke")

regen._capture_index = spy
if fail == "boards":
    leaderboard.render_md = broken
try:
    regen.regen(root)
    error = None
except ValueError as exc:
    error = str(exc)
print(json.dumps({"beside": beside, "error": error, "left": len(multiprocessing.active_children())}))
"""


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [b.entry(name, category=["files", "other"][n % 2]) for n, name in enumerate(NAMES)])
    for n, name in enumerate(NAMES):
        b.write_record(root, b.measured(name, TOOLS[n % 2]))
    # two weekly rows a server, the second moved: every server has a cost movement to report
    b.write_history(root, [f"2026-06-0{day},{name},{100 * n + 10 * day},1,measured,host"
                           for n, name in enumerate(NAMES) for day in (1, 8)])
    return root


def _regen(root: Path, cache: Path, parallel_from: int, fail: str = "") -> dict:
    """What :data:`_RUN` prints for ``root``, with regen's caches under ``cache``."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "MCP_CONTEXT_COST_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", _RUN, str(root), str(parallel_from), fail], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _published(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _can_fork() -> bool:
    """Whether a fresh process with one thread forks workers here (several cores, fork)."""
    return forkpool._workers() >= 2 and "fork" in multiprocessing.get_all_start_methods()


def test_rendered_beside_the_workers_they_are_what_one_process_renders(repo, tmp_path):
    alone = shutil.copytree(repo, tmp_path / "alone")
    run = _regen(alone, tmp_path / "cache-alone", 10**9)
    assert run == {"beside": [0], "error": None, "left": 0}
    run = _regen(repo, tmp_path / "cache-workers", 1)
    assert run["error"] is None and run["left"] == 0
    assert run["beside"] == ([forkpool._workers()] if _can_fork() else [0])
    assert _published(repo) == _published(alone)
    # warm: every page and text kept, nothing drawn in workers
    assert _regen(repo, tmp_path / "cache-workers", 1) == {"beside": [0], "error": None, "left": 0}
    assert _published(repo) == _published(alone)


@pytest.mark.parametrize("fail", ["index", "boards"])
@pytest.mark.parametrize("parallel_from", [1, 10**9], ids=["workers", "in-process"])
def test_an_error_rendering_them_stops_the_run_with_nothing_written(repo, tmp_path, fail, parallel_from):
    before = _published(repo)
    run = _regen(repo, tmp_path / "cache", parallel_from, fail)
    assert run["error"] == {"index": "the index broke", "boards": "the leaderboard broke"}[fail]
    assert run["left"] == 0 and _published(repo) == before
    if fail == "index":  # (the boards come first: the index is not reached)
        assert run["beside"] == ([forkpool._workers()] if parallel_from == 1 and _can_fork() else [0])
