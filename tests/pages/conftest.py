"""Fixtures for the publish tests: the standard scenario, built and regenerated once per session and
copied for each test, so a test may change its copy freely."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from harness.pages.regen import regen
from tests.pages import scenario


@pytest.fixture(scope="session")
def _published_once(tmp_path_factory: pytest.TempPathFactory):
    """The scenario after ``regen``, never handed to a test: ``published`` copies it."""
    root = tmp_path_factory.mktemp("published") / "repo"
    root.mkdir()
    records = scenario.build(root)
    written = regen(root)
    return root, records, written


@pytest.fixture
def published(_published_once, tmp_path: Path):
    """``(root, records, written paths)`` after building the scenario and running ``regen``: a
    private copy of the tree (symlinks kept as links), records and paths for each test."""
    source, records, written = _published_once
    root = tmp_path / "repo"
    shutil.copytree(source, root, symlinks=True)
    return root, copy.deepcopy(records), [root / path.relative_to(source) for path in written]
