"""The code's own checks, run as part of the test command: mypy over ``harness`` (default settings,
``[tool.mypy]`` in pyproject.toml) and import-linter's layer contract (``[tool.importlinter]``,
docs/ARCHITECTURE.md). Each fails with the tool's own output."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO

BIN = Path(sys.executable).parent


def check(name: str, argv: list[str]) -> None:
    """Run ``argv`` in the repository root (where both tools read pyproject.toml and keep their
    git-ignored caches) with this checkout's ``harness`` first on the import path; fail with its output."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"{name} exited with {done.returncode}:\n{done.stdout}{done.stderr}", pytrace=False)


@pytest.mark.slow
def test_mypy_finds_no_error():
    check("mypy", [sys.executable, "-m", "mypy"])


def test_layers_contract_is_kept():
    check("lint-imports", [str(BIN / "lint-imports"), "--no-logo"])


def test_every_package_of_harness_is_a_layer():
    """A package left out of the contract would be free to import anything."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = (c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    packages = {f"harness.{p.parent.name}" for p in (REPO / "harness").glob("*/__init__.py")}
    assert packages == set(contract["layers"])
