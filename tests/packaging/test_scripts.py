"""scripts/setup.sh, test.sh and main.sh: setup prints one line per step and no warning banner on a
fresh HOME, and runs pip only when what it installs from changed; main.sh hands every argument to
``sweep`` and ends by saying what it left in the working tree."""

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

SCRIPTS = [REPO / "scripts" / name for name in ("setup.sh", "test.sh", "main.sh")] + [REPO / ".ci" / "run"]


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


# A venv's python for setup.sh: answers the version questions, logs every pip call to $PIP_LOG and
# exits with $FAKE_PIP_EXIT. Called as ``$PYTHON -m venv .venv``, it plants itself as .venv/bin/python.
FAKE_PYTHON = """#!/usr/bin/env bash
case "$1 $2" in
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
  "-VV "|"--version ") echo "Python $FAKE_VERSION (fake)" ;;
  "-m pip") echo "pip ${*:3}" >>"$PIP_LOG"; exit "${FAKE_PIP_EXIT:-0}" ;;
  "-m harness.core.tokenizer") echo "o200k_base ready" ;;
esac
"""


@pytest.fixture
def setup_checkout(tmp_path) -> Path:
    """setup.sh in a checkout with no .venv, a fake Python (``FAKE_PYTHON``) and stub bwrap/chromium."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(REPO / "scripts" / "setup.sh", root / "scripts" / "setup.sh")
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy2(REPO / name, root / name)
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("python-fake", "bwrap", "chromium"):
        (tools / name).write_text(FAKE_PYTHON if name == "python-fake" else "#!/bin/sh\n")
        (tools / name).chmod(0o755)
    return root


def _setup(root: Path, version: str = "3.11.7", pip_exit: int = 0) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run setup.sh; its result and the pip calls it made."""
    tools, pip_log = root.parent / "tools", root.parent / "pip.log"
    pip_log.unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "PYTHON": str(tools / "python-fake"),
           "PIP_LOG": str(pip_log), "FAKE_VERSION": version, "FAKE_PIP_EXIT": str(pip_exit)}
    done = subprocess.run(["bash", str(root / "scripts" / "setup.sh")], env=env, capture_output=True, text=True, timeout=60)
    return done, pip_log.read_text().splitlines() if pip_log.exists() else []


def test_setup_runs_pip_only_when_what_it_installs_from_changed(setup_checkout):
    done, pip = _setup(setup_checkout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "first run downloads them" in done.stdout
    assert pip[-1] == "pip install --quiet --disable-pip-version-check -c constraints.txt -e .[test]"

    done, pip = _setup(setup_checkout)
    assert done.returncode == 0 and pip == [], done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("setup: pinned dependencies")]
    assert "unchanged since the last install" in line and "pip skipped" in line
    assert len(done.stdout.splitlines()) == 4, done.stdout

    with open(setup_checkout / "constraints.txt", "a") as constraints:
        constraints.write("# a changed pin\n")
    assert _setup(setup_checkout)[1] != []
    assert _setup(setup_checkout)[1] == []
    assert _setup(setup_checkout, version="3.12.1")[1] != []
    (setup_checkout / "pyproject.toml").write_text((setup_checkout / "pyproject.toml").read_text() + "\n")
    assert _setup(setup_checkout, version="3.12.1")[1] != []


def test_setup_after_a_failed_install_runs_pip_again(setup_checkout):
    _setup(setup_checkout)
    (setup_checkout / "constraints.txt").write_text("mcp==0\n")
    done, pip = _setup(setup_checkout, pip_exit=1)
    assert done.returncode == 1 and "pip failed" in done.stdout
    (setup_checkout / "constraints.txt").write_text((REPO / "constraints.txt").read_text())
    assert _setup(setup_checkout)[1] != []  # the earlier stamp went with the failed install


def test_setup_through_a_venv_linked_from_another_checkout_leaves_that_venv_alone(setup_checkout):
    _setup(setup_checkout)
    stamp = (setup_checkout / ".venv" / "setup-stamp").read_text()
    worktree = setup_checkout.parent / "worktree"
    shutil.copytree(setup_checkout / "scripts", worktree / "scripts")
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy2(setup_checkout / name, worktree / name)
    (worktree / ".venv").symlink_to(setup_checkout / ".venv")

    done, pip = _setup(worktree)
    assert done.returncode == 0 and pip == [], done.stdout + done.stderr
    assert "installed from the same files: pip skipped" in done.stdout
    (worktree / "constraints.txt").write_text("mcp==0\n")
    done, pip = _setup(worktree)
    assert done.returncode == 0 and pip == [], done.stdout + done.stderr
    assert "differs from this checkout's files: pip skipped" in done.stdout
    assert (setup_checkout / ".venv" / "setup-stamp").read_text() == stamp
    assert _setup(setup_checkout)[1] == []  # the owner's own checkout still finds its install current


def _editable_of(venv: Path, checkout: Path) -> None:
    """The plain .pth an editable install of ``checkout`` leaves in ``venv`` (the flat layout's)."""
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    (site / "__editable__.mcp_context_cost-0.1.0.pth").write_text(f"{checkout}\n")


def test_setup_names_the_checkout_a_linked_venv_was_installed_from_and_installs_into_its_own(setup_checkout):
    venvs = setup_checkout.parent / "venvs"
    (venvs / "bin").mkdir(parents=True)
    shutil.copy2(setup_checkout.parent / "tools" / "python-fake", venvs / "bin" / "python")
    (setup_checkout / ".venv").symlink_to(venvs)
    _editable_of(venvs, setup_checkout.parent / "owner")
    done, pip = _setup(setup_checkout)
    assert done.returncode == 0 and pip == [], done.stdout + done.stderr
    assert f"shared .venv of {setup_checkout.parent / 'owner'}," in done.stdout

    alias = setup_checkout.parent / "alias"
    alias.symlink_to(setup_checkout)
    _editable_of(venvs, alias)  # a venv kept elsewhere, installed from this checkout (through a link): its own
    done, pip = _setup(setup_checkout)
    assert done.returncode == 0 and pip != [] and "shared" not in done.stdout, done.stdout + done.stderr
    assert _setup(setup_checkout)[1] == []  # its stamp now holds: pip skipped on the next run


@pytest.mark.parametrize("target", ["missing", "empty"])
def test_setup_through_a_link_to_no_venv_stops_and_creates_none(setup_checkout, target):
    elsewhere = setup_checkout.parent / "elsewhere" / ".venv"
    if target == "empty":
        elsewhere.mkdir(parents=True)
    (setup_checkout / ".venv").symlink_to(elsewhere)
    done, pip = _setup(setup_checkout)
    assert done.returncode == 1 and pip == [], done.stdout + done.stderr
    assert f"a link to {elsewhere}, which holds no virtualenv" in done.stdout and "rm .venv" in done.stdout
    assert "tokenizer" not in done.stdout
    assert not (elsewhere / "bin").exists()  # no venv was made in the other checkout's place


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
