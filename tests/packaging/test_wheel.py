"""The project installs like any Python tool: a wheel built from the source, installed into a fresh
virtual environment with the pinned dependencies, measures a real pinned server and verifies the
record from an empty directory (no checkout, no ``schemas/`` beside it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

SERVER = "npx -y @modelcontextprotocol/server-memory@2026.8.31"  # as in tests/probe/test_real_servers.py
SOURCES = ("pyproject.toml", "README.md", "harness", "schemas")


def copy_sources(dest: Path) -> Path:
    """The files a build reads, copied out of the checkout (the build then writes nothing into it);
    the harness/schemas link is kept as a link, as git stores it."""
    dest.mkdir()
    for name in SOURCES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def build_wheel(source: Path, out: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
                           "-q", "-w", str(out), str(source)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("mcp_context_cost-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    return build_wheel(copy_sources(tmp / "src"), tmp / "dist")


@pytest.mark.slow
def test_wheel_ships_every_schema_as_package_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.split("/")[-1] for n in names if n.startswith("harness/schemas/")}
    assert shipped == {p.name for p in (REPO / "schemas").glob("*.schema.json")}
    for member in (n for n in names if n.startswith("harness/schemas/")):
        assert zipfile.ZipFile(wheel).read(member) == (REPO / "schemas" / member.split("/")[-1]).read_bytes()
    assert not any(n.startswith(("tests/", "schemas/", "bench/")) for n in names)


@pytest.mark.slow
def test_wheel_ships_the_typed_marker(wheel):
    """PEP 561: ``harness/py.typed`` tells type checkers of code that imports ``harness`` to read its annotations."""
    assert (REPO / "harness" / "py.typed").is_file()
    assert "harness/py.typed" in zipfile.ZipFile(wheel).namelist()


@pytest.mark.slow
def test_installed_wheel_measures_and_verifies_from_an_empty_directory(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    # Without the checkout on PYTHONPATH: a developer's stale mcp_context_cost.egg-info there would
    # make pip call the wheel "already satisfied" and install nothing.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              "-c", str(REPO / "constraints.txt"), str(wheel)],
                             env=env, capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout + install.stderr
    tool = str(env_dir / "bin" / "mcp-context-cost")
    assert Path(tool).is_file(), "the wheel installed no mcp-context-cost command:\n" + install.stdout + install.stderr
    empty = tmp_path / "empty"
    empty.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([tool, *args], cwd=empty, env=env, capture_output=True, text=True, timeout=600)

    measured = run("measure", "--command", SERVER, "--name", "memory-pinned", "--single")
    assert measured.returncode == 0, measured.stdout + measured.stderr
    assert "Traceback" not in measured.stdout + measured.stderr
    (record,) = empty.rglob("measurement.json")
    verified = run("verify", str(record))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("OK ")
    # The installed copy, not this checkout, did the work.
    where = subprocess.run([str(env_dir / "bin" / "python"), "-c", "import harness; print(harness.__file__)"],
                           cwd=empty, env=env, capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in where and str(REPO) not in where
