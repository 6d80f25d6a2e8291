"""The repository's .gitignore keeps out what the harness writes beside the published files: the
publish transaction's staging directory, the ad-hoc measurements, and a .venv (also as a link to
another checkout's)."""

from __future__ import annotations

import subprocess

from harness.util.published import AD_HOC_DIR, STAGING_DIR
from tests.conftest import REPO


def test_the_names_held_in_util_published_are_the_ignored_ones():
    for path in (f"{STAGING_DIR}/2026-12-01-1/JOURNAL", f"{AD_HOC_DIR}/results/x/measurement.json", ".venv"):
        done = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=REPO, timeout=30)
        assert done.returncode == 0, f"{path} is not ignored by .gitignore"
