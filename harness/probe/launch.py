"""One launch of a stdio server, start to teardown, in its entry's stable, emptied working directory.

Returns a ``Capture`` whatever happens: a crash, a hang or a hostile reply becomes a ``Failure``
in it, never an exception. The per-launch budget is one deadline over the whole conversation
(spawn to the last page), not a per-request timeout.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from harness.probe import environment, sandbox
from harness.probe.limits import Limits
from harness.probe.outcome import Capture, Failure
from harness.probe.process import SpawnError, resolve_argv, split_command
from harness.probe.session import converse, run_within
from harness.probe.stdio import StdioTransport
from harness.probe.target import Target
from harness.probe.workdir import launch_dir


async def launch_once(
    target: Target,
    budget_seconds: float,
    limits: Limits,
    requested_version: str,
    *,
    pass_declared_values: bool = True,
    conversation=converse,
    isolation: str = "host",
) -> Capture:
    """Launch ``target.command`` once and run the MCP conversation within ``budget_seconds``.

    Never raises for anything the server does; the ``Capture`` says what happened.
    """
    capture = Capture(requested_version=requested_version)
    started = time.monotonic()
    with contextlib.ExitStack() as scope:
        sandboxed = isolation == "sandbox"
        env = environment.child_env(target.env, pass_declared_values=pass_declared_values and not sandboxed)
        env.update(target.set_env)
        try:
            # a stable, emptied per-entry directory (harness.probe.workdir; issue #10)
            cwd = Path(target.cwd) if target.cwd else scope.enter_context(launch_dir(target.name, target.needs_git))
            argv, env = _isolated_argv(split_command(target.command or ""), env, cwd, isolation, target)
            transport = StdioTransport(argv, env, cwd, limits)
            await transport.start()
        except SpawnError as exc:
            capture.failure = Failure("spawn", "spawn", str(exc))
            return capture
        try:
            await run_within(conversation, transport, capture, limits, budget_seconds)
        finally:
            if capture.failure and capture.failure.kind == "exited":
                await transport.wait_exit(1.0)
            capture.exit_code = await transport.close()
            capture.stderr_tail = transport.stderr_tail()
            capture.noise_lines = transport.noise_lines
            capture.noise_sample = transport.noise_sample
            capture.elapsed_seconds = round(time.monotonic() - started, 3)
        if capture.failure and capture.failure.kind == "exited":
            capture.failure.exit_code = capture.exit_code
    return capture


def _isolated_argv(argv: list[str], env: dict, cwd: Path, isolation: str, target: Target) -> tuple[list[str], dict]:
    """argv and env for the chosen isolation mode (see ``sandbox``). Raises ``SpawnError``."""
    if isolation == "sandbox":
        try:
            resolved = resolve_argv(argv, sandbox.sandbox_path(env["PATH"]))
            return sandbox.bwrap_argv(resolved, cwd, env)
        except sandbox.SandboxUnavailable as exc:
            raise SpawnError(str(exc)) from None
    if isolation == "docker":
        image = sandbox.docker_image_for(argv[0])
        return resolve_argv(sandbox.docker_argv(argv, list(target.env), image), env["PATH"]), env
    return resolve_argv(argv, env["PATH"]), env
