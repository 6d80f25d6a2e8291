"""Packaging metadata installs quietly: the editable install ``scripts/setup.sh`` makes prints no
setuptools warning banner, and the check can fail (the flat layout without ``package-dir`` prints one)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.packaging.test_wheel import copy_sources

# setuptools' banners: a *Warning class name, "!!" fences, a row of asterisks.
BANNER = re.compile(r"\w+Warning\b|^\s*!!\s*$|\*{20,}", re.MULTILINE)


def editable_install_output(source: Path, target: Path) -> str:
    """What setup.sh's install step prints for ``source`` (``pip install --quiet -e``, dependencies
    left out), installed into a new environment at ``target`` by this interpreter's pip."""
    venv.EnvBuilder(with_pip=False).create(target)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(target / "bin" / "python"), "install",
                           "--quiet", "--disable-pip-version-check", "--no-deps", "-e", str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_package_dir_is_spelled_out_and_schemas_are_package_data():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["tool"]["setuptools"]["package-dir"] == {"": "."}
    assert "schemas/*.schema.json" in meta["tool"]["setuptools"]["package-data"]["harness"]
    link = REPO / "harness" / "schemas"
    assert link.is_symlink() and link.resolve() == (REPO / "schemas").resolve()


@pytest.mark.slow
def test_editable_install_prints_no_warning_banner(tmp_path):
    output = editable_install_output(copy_sources(tmp_path / "src"), tmp_path / "venv")
    assert not BANNER.search(output), output


@pytest.mark.slow
def test_the_banner_check_catches_the_old_metadata(tmp_path):
    source = copy_sources(tmp_path / "src")
    pyproject = source / "pyproject.toml"
    old = re.sub(r'^package-dir = .*$', "", pyproject.read_text(encoding="utf-8"), flags=re.MULTILINE)
    pyproject.write_text(old, encoding="utf-8")
    output = editable_install_output(source, tmp_path / "venv")
    assert BANNER.search(output), output
