"""A subprocess the suite starts from another folder runs this checkout's harness, even through a
.venv shared with another checkout (whose editable install names that checkout)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_a_subprocess_in_another_folder_imports_this_checkouts_harness(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import harness; print(harness.__file__)"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve().is_relative_to(REPO), (done.stdout, REPO)
