"""One launch of a stdio server, start to teardown, in a fresh temp working directory.

Returns a ``Capture`` whatever happens: a crash, a hang or a hostile reply becomes a ``Failure``
in it, never an exception. The per-launch budget is one deadline over the whole conversation
(spawn to the last page), not a per-request timeout.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from harness.probe import environment
from harness.probe.limits import Limits
from harness.probe.outcome import Capture, Failure
from harness.probe.process import SpawnError, resolve_argv, split_command
from harness.probe.session import converse
from harness.probe.stdio import StdioTransport, TransportLimitExceeded
from harness.probe.target import Target
from harness.probe.workdir import prepare_workdir


async def launch_once(
    target: Target,
    budget_seconds: float,
    limits: Limits,
    requested_version: str,
    *,
    pass_declared_values: bool = True,
    conversation=converse,
) -> Capture:
    """Launch ``target.command`` once and run the MCP conversation within ``budget_seconds``.

    Never raises for anything the server does; the ``Capture`` says what happened.
    """
    capture = Capture(requested_version=requested_version)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-context-cost-") as tmp:
        cwd = Path(tmp)
        env = environment.child_env(target.env, pass_declared_values=pass_declared_values)
        try:
            prepare_workdir(cwd, needs_git=target.needs_git)
            argv = resolve_argv(split_command(target.command or ""), env["PATH"])
            transport = StdioTransport(argv, env, cwd, limits)
            await transport.start()
        except SpawnError as exc:
            capture.failure = Failure("spawn", "spawn", str(exc))
            return capture
        try:
            await _converse_within(conversation, transport, capture, limits, budget_seconds)
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


async def _converse_within(conversation, transport: StdioTransport, capture: Capture, limits: Limits, budget: float) -> None:
    try:
        async with asyncio.timeout(budget):
            await conversation(transport, capture, limits)
    except TimeoutError:
        capture.failure = Failure("timeout", capture.phase, f"no answer within {budget:g} s")
    except TransportLimitExceeded as exc:
        capture.failure = Failure("limit", capture.phase, str(exc))
