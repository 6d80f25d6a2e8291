"""scripts/setup.sh and scripts/main.sh (issue #15, "Quiet, visible setup" and "Help and README say
what happens"): setup prints one line per step and no warning banner, on a fresh HOME; main.sh hands
every argument to ``sweep`` and ends by saying what it left in the working tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.test_lints import tool
from tests.conftest import REPO
from tests.packaging.test_metadata import BANNER

SCRIPTS = [REPO / "scripts" / "setup.sh", REPO / "scripts" / "main.sh"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_shellcheck(script):
    done = subprocess.run([tool("shellcheck"), str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_setup_on_a_fresh_home_prints_one_line_per_step_and_no_banner(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_CACHE_HOME", None)
    done = subprocess.run(["bash", str(REPO / "scripts" / "setup.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    steps = [line.split(":", 2)[1].strip() for line in lines]
    assert steps == ["system tools (bubblewrap, chromium)", "virtualenv .venv", "pinned dependencies (constraints.txt)",
                     "tokenizer"], lines
    assert all(line.startswith("setup: ") for line in lines)
    assert done.stderr == "", done.stderr
    assert not BANNER.search(done.stdout + done.stderr)
    assert "sha256 verified" in lines[-1]  # the fresh HOME had no cached tokenizer: it was provisioned again
    assert not BANNER.search((REPO / ".venv" / "setup-pip.log").read_text(encoding="utf-8", errors="replace"))


@pytest.fixture
def fake_checkout(tmp_path) -> Path:
    """main.sh in a checkout whose setup does nothing and whose ``mcp-context-cost`` prints its
    arguments and exits with ``$FAKE_EXIT``: main.sh's own behaviour, without a real sweep."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(REPO / "scripts" / "main.sh", root / "scripts" / "main.sh")
    (root / "scripts" / "setup.sh").write_text("echo 'setup: (stub)'\n")
    cli = root / ".venv" / "bin" / "mcp-context-cost"
    cli.parent.mkdir(parents=True)
    cli.write_text(f"#!{sys.executable}\nimport os, sys\nprint('ARGS', sys.argv[1:])\nsys.exit(int(os.environ['FAKE_EXIT']))\n")
    cli.chmod(0o755)
    return root


def _main(root: Path, *args: str, exit_code: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(root / "scripts" / "main.sh"), *args], capture_output=True, text=True,
                          env={**os.environ, "FAKE_EXIT": str(exit_code)}, timeout=60)


def test_main_passes_every_argument_to_sweep_and_says_nothing_was_committed(fake_checkout):
    done = _main(fake_checkout, "--only", "memory,time", "--date", "2026-11-30")
    assert done.returncode == 0
    assert "ARGS ['sweep', '--only', 'memory,time', '--date', '2026-11-30']" in done.stdout
    last = done.stdout.splitlines()[-1]
    assert last.startswith("main.sh: the sweep wrote into tracked files (results/, badges/, history.csv, docs/) "
                           "and committed nothing")
    assert "main.sh hands its arguments to sweep" in last


@pytest.mark.parametrize("code, says", [(1, "nothing was published"), (2, "bad input"), (3, "exit code 3")])
def test_main_keeps_the_sweep_exit_code_and_says_what_it_means(fake_checkout, code, says):
    done = _main(fake_checkout, exit_code=code)
    assert done.returncode == code and says in done.stdout.splitlines()[-1]
    assert "wrote into" not in done.stdout


def test_main_with_commit_says_it_committed(fake_checkout):
    done = _main(fake_checkout, "--commit")
    assert "ARGS ['sweep', '--commit']" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("main.sh: the sweep published and committed")
