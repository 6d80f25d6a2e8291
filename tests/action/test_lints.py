"""Every workflow, example and action metadata file passes actionlint (with shellcheck) and
check-jsonschema's vendored GitHub schemas; the Dockerfile passes hadolint. No network needed:
the linters come from the test extras as wheels that ship their binaries."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
EXAMPLES = sorted((REPO / "examples").glob("*.yml"))
ACTIONS = [REPO / "action.yml", REPO / "host" / "action.yml"]


def tool(name: str) -> str:
    """The linter next to this interpreter (the venv), else on PATH; fails when missing (the test
    extras install it)."""
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]'"
    return found


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_there_are_files_to_lint():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "sweep.yml", "servers-pr.yml", "self-badge.yml"}
    assert EXAMPLES and all(p.exists() for p in ACTIONS)


@pytest.mark.parametrize("path", WORKFLOWS + EXAMPLES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_actionlint(path):
    done = run([tool("actionlint"), "-shellcheck", tool("shellcheck"), "-no-color", str(path.relative_to(REPO))])
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("schema, paths", [
    ("vendor.github-workflows", WORKFLOWS + EXAMPLES),
    ("vendor.github-actions", ACTIONS),
], ids=["workflows", "actions"])
def test_github_schemas(schema, paths):
    done = run([tool("check-jsonschema"), "--builtin-schema", schema, *map(str, paths)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor():
    """zizmor, offline (no GitHub API), on every workflow, example and action metadata file."""
    done = run([tool("zizmor"), "--offline", "--no-progress", "--config", ".github/zizmor.yml",
                *(str(p.relative_to(REPO)) for p in WORKFLOWS + EXAMPLES + ACTIONS)])
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_catches_a_bad_workflow(tmp_path):
    """The zizmor run above is a real check: a checkout that keeps its credentials in a job that
    can write, and an unpinned action, are reported."""
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\npermissions:\n  contents: write\njobs:\n  j:\n    runs-on: ubuntu-24.04\n"
                   "    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/upload-artifact@v4\n"
                   "        with:\n          path: .\n")
    done = run([tool("zizmor"), "--offline", "--no-progress", str(bad)])
    assert done.returncode != 0 and "artipacked" in done.stdout + done.stderr


def test_hadolint_dockerfile():
    done = run([tool("hadolint"), "--no-color", "Dockerfile"])
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_catches_a_bad_dockerfile(tmp_path):
    """The hadolint run above is a real check: an unpinned base image is reported."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN apt-get install curl\n")
    done = run([tool("hadolint"), "--no-color", str(bad)])
    assert done.returncode != 0 and "DL3006" in done.stdout


def test_actionlint_catches_a_bad_workflow(tmp_path):
    """actionlint is a real check here: untrusted input interpolated into run: is reported."""
    bad = tmp_path / "bad.yml"
    bad.write_text("on: pull_request\njobs:\n  j:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "      - run: echo \"${{ github.event.pull_request.title }}\"\n")
    done = run([tool("actionlint"), "-no-color", str(bad)])
    assert done.returncode != 0 and "potentially untrusted" in done.stdout
