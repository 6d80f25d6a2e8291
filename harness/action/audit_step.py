"""The Action's ``config`` input: ``mcp-context-cost audit`` over the named config files, in a child process, same gates.

Public: ``run_audit_step``. Rule: docs/ACTION.md, "Inputs".
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import MutableMapping
from typing import TextIO

from harness.action import github
from harness.action.inputs import OUTPUT_DIR, Inputs
from harness.pages.text import md


def run_audit_step(inputs: Inputs, environ: MutableMapping[str, str], out: TextIO, outputs: dict, finish) -> int:
    """Run the audit for the Action; ``finish`` writes the outputs and summary. Returns the exit code."""
    folder = inputs.working_directory / OUTPUT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    report_path, markdown_path = folder / "audit.json", folder / "audit.md"
    args = [sys.executable, "-m", "harness.cli", "audit", "--no-discover", "--timeout", f"{inputs.timeout_seconds:g}",
            "--json", str(report_path), "--markdown", str(markdown_path)]
    for path in inputs.config:
        args += ["--config", str(path)]
    if inputs.budget is not None:
        args += ["--budget", str(inputs.budget)]
    if inputs.baseline is not None:
        args += ["--baseline", str(inputs.baseline)]
    if inputs.max_increase is not None:
        args += ["--max-increase", str(inputs.max_increase).replace(" tokens", "")]
    for flag, source, value in (("--changed", "--index", inputs.changed),
                                ("--suggest", "--tool-shape", inputs.suggest)):
        if value is not None:
            args += [f"{source}={value}"] if value else [flag]
    done = subprocess.run(args, cwd=inputs.working_directory, env=dict(environ), capture_output=True, text=True)
    github.print_untrusted(out, done.stderr + done.stdout)
    outputs["audit-report-path"] = github.relative_to_workspace(report_path, inputs.workspace) \
        if report_path.is_file() else ""
    if done.returncode == 2 or not report_path.is_file():
        reason = (done.stderr.strip().splitlines() or ["the audit did not produce a report"])[-1]
        github.annotate(out, "error", "audit could not run", reason)
        return finish(environ, outputs, f"## MCP context cost audit\n\nThe audit could not run: {_plain(reason)}\n", 1)
    report = json.loads(report_path.read_text(encoding="utf-8"))
    total = report["summary"]["costliestSessionTotal"]
    outputs["tokens"] = str(total["tokens"]) if total and not total["floor"] else ""
    outputs["status"] = "audited" if done.returncode == 0 else "failed"
    for gate in report["gates"]:
        if not gate["passed"]:
            for reason in gate["reasons"]:
                github.annotate(out, "error", f"audit gate failed ({gate['gate']})", reason)
    return finish(environ, outputs, markdown_path.read_text(encoding="utf-8"), 1 if done.returncode else 0)


def _plain(text: str) -> str:
    return md(text, 500)
