"""Run ``entrypoint.py`` exactly as the runner does: a subprocess whose environment carries the
inputs as ``INPUT_*`` variables, with ``GITHUB_OUTPUT``/``GITHUB_STEP_SUMMARY`` files and a
``GITHUB_WORKSPACE`` in a temporary directory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

ENTRYPOINT = REPO / "entrypoint.py"
_OUTPUT = re.compile(r"^([A-Za-z0-9_-]+)<<(\S+)\n(.*?)\n\2\n", re.S | re.M)


@dataclass
class ActionRun:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    workspace: Path

    def record(self) -> dict:
        return json.loads((self.workspace / self.outputs["measurement-path"]).read_text(encoding="utf-8"))

    def errors(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith("::error ")]


def parse_outputs(text: str) -> dict[str, str]:
    """The ``name<<DELIM`` / value / ``DELIM`` blocks of a GITHUB_OUTPUT file; fails on leftovers."""
    outputs = {m.group(1): m.group(3) for m in _OUTPUT.finditer(text)}
    assert _OUTPUT.sub("", text) == "", f"unparsed GITHUB_OUTPUT text: {text!r}"
    return outputs


def input_env(inputs: dict[str, str]) -> dict[str, str]:
    """``{"max-increase": "10%"}`` → ``{"INPUT_MAX-INCREASE": "10%"}`` (the runner keeps hyphens)."""
    return {f"INPUT_{name.replace(' ', '_').upper()}": value for name, value in inputs.items()}


@pytest.fixture
def run_action(tmp_path):
    """``run_action(inputs, env=None, timeout=...)`` → :class:`ActionRun`."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    def run(inputs: dict[str, str], env: dict[str, str] | None = None, timeout: float = 300) -> ActionRun:
        output, summary = tmp_path / "github_output", tmp_path / "step_summary"
        output.write_text("")
        summary.write_text("")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
        environ = base | {"GITHUB_WORKSPACE": str(workspace), "GITHUB_OUTPUT": str(output),
                          "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_REPOSITORY": "octo/Example_Server",
                          "GITHUB_ACTIONS": "true"} | input_env(inputs) | (env or {})
        done = subprocess.run([sys.executable, str(ENTRYPOINT)], env=environ, cwd=workspace,
                              capture_output=True, text=True, timeout=timeout)
        return ActionRun(done.returncode, done.stdout, done.stderr, parse_outputs(output.read_text()),
                         summary.read_text(), workspace)

    return run
