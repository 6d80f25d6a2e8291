"""npm's version read from its package.json equals what ``npm --version`` prints; other layouts fall back."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from harness.probe import isolation


def test_npm_version_from_its_package_is_what_npm_prints():
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("no npm on PATH")
    printed = subprocess.run([npm, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert isolation.npm_package_version(npm) == printed


def _layout(tmp_path, package: bytes):
    (tmp_path / "npm" / "bin").mkdir(parents=True)
    (tmp_path / "npm" / "bin" / "npm-cli.js").write_text("")
    (tmp_path / "npm" / "package.json").write_bytes(package)
    (tmp_path / "usr-bin").mkdir()
    link = tmp_path / "usr-bin" / "npm"
    link.symlink_to(tmp_path / "npm" / "bin" / "npm-cli.js")
    return str(link)


def test_the_package_beside_the_real_path_is_read(tmp_path):
    assert isolation.npm_package_version(_layout(tmp_path, b'{"name": "npm", "version": "10.9.3"}')) == "10.9.3"


@pytest.mark.parametrize("package", [
    b'{"name": "not-npm", "version": "10.9.3"}',
    b'{"name": "npm", "version": "10.9.3\\nextra"}',
    b'{"name": "npm", "version": 10}',
    b'["npm"]',
    b'{"name": "npm", "version": "1.2.3", "pad": "' + b"x" * (2 << 20) + b'"}',
    b"\xff not json",
])
def test_an_odd_package_gives_no_version_so_npm_is_asked(tmp_path, package):
    assert isolation.npm_package_version(_layout(tmp_path, package)) is None


def test_a_script_outside_a_bin_folder_gives_no_version(tmp_path):
    (tmp_path / "npm").write_text("#!/bin/sh\n")
    (tmp_path / "package.json").write_text(json.dumps({"name": "npm", "version": "1.2.3"}))
    assert isolation.npm_package_version(str(tmp_path / "npm")) is None
