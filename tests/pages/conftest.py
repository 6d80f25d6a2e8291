"""Fixtures for the publish tests: the standard scenario, built and regenerated once per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.pages.regen import regen
from tests.pages import scenario


@pytest.fixture
def published(tmp_path: Path):
    """``(root, records, written paths)`` after building the scenario and running ``regen``."""
    root = tmp_path / "repo"
    root.mkdir()
    records = scenario.build(root)
    written = regen(root)
    return root, records, written
