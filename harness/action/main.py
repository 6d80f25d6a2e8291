"""The GitHub Action: measure one server (or audit configs), write its record and badge, gate, summarise, comment.

Public: ``run``, ``main``. Inputs, outputs and exit codes: docs/ACTION.md.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import TextIO, cast

from harness.action import base_worktree
from harness.action import comment
from harness.action import event, github, handover, paths, pull
from harness.action.audit_step import run_audit_step
from harness.action.comparison import BaselineError, Comparison, compare, evaluate, load
from harness.action.inputs import InputError, Inputs, read
from harness.action.summary import render, text
from harness.core.record import NUMBERED, Record
from harness.pages.badge import badge_for, write_badge
from harness.probe import build_record as record
from harness.probe import server_env, isolation
from harness.probe.measure import measure_sync
from harness.probe.redact import Secrets
from harness.probe.target import Target
from harness.util import published, untrusted, user_cache

IMAGE_ENV = "MCP_CONTEXT_COST_ACTION_IMAGE"  # set by the Dockerfile: we run in the container action
CONTAINER_NOTE = ("the mcp-context-cost container action: the server runs as a child of the harness inside the "
                  "action's container (workspace mounted, declared env values passed)")
HOST_NOTE = ("the mcp-context-cost host action: the server runs as a child of the harness in the job's own "
             "environment, declared env values passed")


OUTPUT_NAMES = ("tokens", "tool-count", "status", "canonical-sha256", "measurement-path", "badge-path", "delta",
                "audit-report-path", "base-total", "head-total")


def run(environ: MutableMapping[str, str] | None = None, stdout: TextIO | None = None) -> int:
    """Run the Action against ``environ``, writing commands and the log to ``stdout``; returns the exit code."""
    environ = os.environ if environ is None else environ
    out = stdout or sys.stdout
    outputs = dict.fromkeys(OUTPUT_NAMES, "")
    outputs["status"] = "error"
    try:
        return _run(environ, out, outputs)
    except Exception as exc:  # noqa: BLE001 - a crash still reports, writes outputs and a summary
        message = _secrets(environ).text(f"{type(exc).__name__}: {exc}")
        github.annotate(out, "error", "the action failed", message)
        return _finish(environ, out, outputs, f"## Context cost\n\nThe action failed: {text(message)}", 1)


def _run(environ: MutableMapping[str, str], out: TextIO, outputs: dict) -> int:
    token = handover.received(environ)  # restarted without the token in its environment: here it is
    try:
        inputs = read(environ if token is None else {**environ, handover.TOKEN_INPUT: token})
    except InputError as exc:
        for problem in exc.problems:
            github.annotate(out, "error", "invalid input", problem)
        return _finish(environ, out, outputs, "## Context cost\n\nInvalid input:\n\n" +
                       "\n".join(f"- {text(p)}" for p in exc.problems), 1)
    _drop_token(environ)  # read into inputs; run in-process (not restarted), nothing launched sees it either
    if inputs.comment_from is not None:  # the workflow_run side: post another run's measurement
        code, markdown = pull.post_from_artifact(inputs, inputs.comment_from, environ, out, outputs)
        return _finish(environ, out, outputs, markdown, code)
    if (unusable := user_cache.problem()) is not None:  # measured here, not through the command line's check
        github.annotate(out, "error", "unusable cache folder", unusable)
        return _finish(environ, out, outputs, f"## Context cost\n\nThe measurement could not run: {text(unusable)}", 1)
    if inputs.config:  # audit client configs instead of measuring one server
        return run_audit_step(inputs, environ, out, outputs,
                              lambda env, outs, markdown, code: _finish(env, out, outs, markdown, code))
    try:
        if inputs.build:
            github.print_untrusted(out, base_worktree.build(inputs.build, inputs.working_directory, environ))
        _declared_env(inputs, environ, out)
        rec, record_path = _measure_one(inputs, environ, inputs.command, inputs.working_directory,
                                        inputs.results_dir)
        badge_path = _badge(inputs, rec)
    except Exception as exc:  # the step must fail loudly, whatever went wrong
        message = _secrets(environ).text(f"{type(exc).__name__}: {exc}")
        github.annotate(out, "error", "measurement could not run", message)
        return _finish(environ, out, outputs, f"## Context cost: {text(inputs.name)}\n\nThe measurement could not "
                       f"run: {text(message)}", 1)
    the_pull = _pull_request(environ, out)
    side = _base_side(inputs, environ, out, the_pull)
    comparison, baseline_error = _compare(inputs, rec, side)
    failures = evaluate(rec, inputs, comparison, baseline_error)
    outputs.update({
        "tokens": _s(rec["totalTokens"]), "tool-count": _s(rec["toolCount"]), "status": rec["status"],
        "canonical-sha256": rec["canonicalSha256"] or "",
        "measurement-path": github.relative_to_workspace(record_path, inputs.workspace),
        "badge-path": github.relative_to_workspace(badge_path, inputs.workspace),
        "delta": _s(comparison.delta if comparison else None),
        "head-total": _s(rec["totalTokens"]), "base-total": _s(comparison.before_tokens if comparison else None),
    })
    _log(out, rec, comparison, outputs)
    for failure in failures:
        github.annotate(out, "error", failure.title, failure.message)
    markdown = render(rec, failures=failures, comparison=comparison, baseline_error=baseline_error,
                      budget=inputs.budget, baseline_label=side.label if side else _label(inputs),
                      baseline_record=_baseline_record(inputs, side) if comparison is not None else None,
                      paths={"record": outputs["measurement-path"], "badge": outputs["badge-path"]})
    if the_pull is not None:
        markdown += "\n" + _comment(inputs, environ, out, the_pull, rec, record_path, side)
    elif inputs.comment:
        github.annotate(out, "notice", "no comment", "comment: true comments on pull_request runs only")
    return _finish(environ, out, outputs, markdown, 1 if failures else 0)


def _drop_token(environ: MutableMapping[str, str]) -> None:
    for key in handover.secret_names(environ):
        del environ[key]


def _declared_env(inputs: Inputs, environ: MutableMapping[str, str], out: TextIO) -> None:
    for name in inputs.env:
        if name in environ and not environ[name]:
            del environ[name]
            github.annotate(out, "notice", "empty env value", f"{name} is empty here (secrets are not given to pull "
                            "requests from forks): the server gets a placeholder value instead")


def _measure_one(inputs: Inputs, environ, command: str | None, cwd: Path, results_dir: Path) -> tuple[Record, Path]:
    """Measure the server and write its record: ``(record, path)``."""
    measurement = measure_sync(_target(inputs, command, cwd), pass_declared_values=True)
    built = record.build(measurement, _isolation(environ, isolation))
    paths.unmoved(inputs.workspace, results_dir / built["server"] / published.RECORD_FILE, "record")
    return cast(Record, built), record.write(built, results_dir)  # build checked it against the schema


def _badge(inputs: Inputs, rec: Record) -> Path:
    badge_path = paths.unmoved(inputs.workspace, inputs.badge_path, "badge-path")
    return write_badge(badge_path, badge_for(rec["status"], rec["totalTokens"]))


def _pull_request(environ, out: TextIO) -> event.PullRequest | None:
    try:
        return event.pull_request(environ)
    except event.EventError as exc:
        github.annotate(out, "warning", "no pull request comparison", str(exc))
        return None


def _baseline_record(inputs: Inputs, side: pull.BaseSide | None) -> Record | None:
    """The record the comparison was made against: the base side's, else the ``baseline`` file's."""
    if side is not None:
        return side.record
    return load(inputs.baseline) if inputs.baseline else None


def _base_side(inputs: Inputs, environ, out: TextIO, the_pull) -> pull.BaseSide | None:
    commit = pull.base_commit(inputs, the_pull)
    if commit is None:
        return None

    def measure(command, cwd, results_dir):
        try:
            return _measure_one(inputs, environ, command, cwd, results_dir)
        except Exception as exc:  # noqa: BLE001 - the base not measuring is the comparison's problem, said
            raise base_worktree.BaseError(_secrets(environ).text(f"{type(exc).__name__}: {exc}")) from None

    side = pull.measure_base(inputs, environ, commit, measure, out)
    if side.problem:
        github.annotate(out, "warning", "base not measured", side.problem)
    return side


def _comment(inputs: Inputs, environ, out: TextIO, the_pull: event.PullRequest, rec: Record, record_path: Path,
             side: pull.BaseSide | None) -> str:
    """Leave the comment artifact; post the comment when asked and allowed. The summary's lines."""
    folder = pull.leave_artifact(inputs, the_pull, record_path, side)
    lines = [f"Comment artifact: {text(github.relative_to_workspace(folder, inputs.workspace))}  "]
    if inputs.comment:
        body = comment.render(rec, side.record if side else None, side.label if side else "the base",
                              base_problem=(side.problem if side else "no base comparison (base: none, or a baseline)"))
        lines.append(pull.post_here(inputs, environ, out, the_pull, body))
    return "\n".join(lines) + "\n"


def _target(inputs: Inputs, command: str | None = None, cwd: Path | None = None):
    return Target(name=inputs.name, command=command if command is not None else inputs.command, url=inputs.url,
                  env=inputs.env, timeout_seconds=inputs.timeout_seconds,
                  cwd=str(cwd if cwd is not None else inputs.working_directory))


def _secrets(environ):
    """What the server is handed that must not be shown (the host's credentials when the inputs cannot be read)."""
    try:
        return Secrets.for_target(_target(read(environ)), environ)
    except Exception:  # noqa: BLE001 - unreadable inputs: redact what the host itself holds
        return Secrets(server_env.host_secrets(environ))


def _isolation(environ, isolation) -> dict:
    image = environ.get(IMAGE_ENV)
    if image:
        return isolation.describe("docker", image=image, note=CONTAINER_NOTE)
    return isolation.describe("host", note=HOST_NOTE)


def _compare(inputs: Inputs, rec: Record, side: pull.BaseSide | None) -> tuple[Comparison | None, str | None]:
    """The comparison with the base's record or the baseline, and why it could not be made."""
    try:
        if side is not None:
            if side.record is None:
                return None, f"the {side.label} could not be measured: {side.problem}"
            return compare(_numbered(side), rec), None
        if inputs.baseline is None:
            return None, None
        return compare(load(paths.unmoved(inputs.workspace, inputs.baseline, "baseline")), rec), None
    except (BaselineError, paths.Moved) as exc:
        return None, str(exc)


def _numbered(side: pull.BaseSide) -> Record:
    if side.record is None or side.record["status"] not in NUMBERED:
        status = None if side.record is None else side.record["status"]
        raise BaselineError(f"the {side.label} has status {status!r} and no token count")
    return side.record


def _log(out: TextIO, rec: Record, comparison: Comparison | None, outputs: dict) -> None:
    lines = [f"{rec['server']}: {rec['status']}"]
    if rec["totalTokens"] is not None:
        lines[0] += f" — {rec['totalTokens']:,} tokens, {rec['toolCount']} tools"
    if comparison is not None:
        lines.append(f"  against the baseline: {comparison.delta:+,} tokens")
    lines += [f"  note: {untrusted.escape(note)}" for note in rec["notes"]]
    lines += [f"  record: {outputs['measurement-path']}", f"  badge:  {outputs['badge-path']}"]
    github.print_untrusted(out, "\n".join(lines))


def _label(inputs: Inputs) -> str | None:
    return github.relative_to_workspace(inputs.baseline, inputs.workspace) if inputs.baseline else None


def _finish(environ, out: TextIO, outputs: dict, markdown: str, code: int) -> int:
    """Write the outputs, then the summary; a write failure is an ``::error`` and exit 1, not a stop."""
    for variable, write in (("GITHUB_OUTPUT", lambda path: github.write_outputs(path, outputs)),
                            ("GITHUB_STEP_SUMMARY", lambda path: github.append_summary(path, markdown))):
        try:
            write(environ.get(variable))
        except OSError as exc:
            github.annotate(out, "error", f"cannot write {variable}", str(exc))
            code = 1
    return code


def _s(value) -> str:
    return "" if value is None else str(value)


def main() -> int:
    """Console entry: ``run()``, restarted first without the credentials (:mod:`harness.action.handover`)."""
    handover.restart()
    return run()
