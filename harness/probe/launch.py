"""One launch of a stdio server, start to teardown, under one deadline: ``launch_once``, ``isolated_argv``."""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Mapping
from pathlib import Path

from harness.probe import server_env, envnames, resolve, sandbox, teardown
from harness.probe.limits import Limits
from harness.probe.outcome import Capture, Failure
from harness.probe.process import SpawnError, resolve_argv, split_command, through_intermediate
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
    environ: Mapping[str, str] | None = None,
) -> Capture:
    """Launch ``target.command`` once and hold the conversation within ``budget_seconds``; never raises for what
    the server does."""
    capture = Capture(requested_version=requested_version)
    started = time.monotonic()
    with contextlib.ExitStack() as scope:
        sandboxed = isolation == "sandbox"
        env = server_env.child_env(target.env, environ, pass_declared_values=pass_declared_values and not sandboxed)
        env.update(target.set_env)
        fds: tuple[int, ...] = ()
        try:
            _refuse_names(target)
            # a config's cwd is never the sandbox's writable start (see isolated_argv); otherwise a
            # stable, emptied per-entry directory (harness.probe.workdir)
            cwd = (Path(target.cwd) if target.cwd and not sandboxed
                   else scope.enter_context(launch_dir(target.name, target.needs_git)))
            argv = split_command(target.command or "")
            # a package resolved once starts from its install, as its launcher would
            resolved = resolve.launch_parts(target, isolation)
            if resolved is not None:
                argv, env = resolved
            argv, env, fds = isolated_argv(argv, env, cwd, isolation, target, verbatim=resolved is not None)
            transport = StdioTransport(argv, env, cwd, limits, pass_fds=fds)
            await transport.start()
        except SpawnError as exc:
            capture.failure = Failure("spawn", "spawn", str(exc))
            return capture
        finally:
            for fd in fds:  # the child holds its own copy now
                os.close(fd)
        try:
            await run_within(conversation, transport, capture, limits, budget_seconds)
        except BaseException:
            await _end(transport, capture, started)
            raise
        if capture.ok and teardown.active():
            # final: the teardown only adds the exit code, off the critical path
            _read_transport(transport, capture, started)
            teardown.defer(functools.partial(_end, transport, capture, workdir=scope.pop_all()))
            return capture
        if capture.failure and capture.failure.kind == "exited":
            await transport.wait_exit(1.0)
        await _end(transport, capture, started)
        if capture.failure and capture.failure.kind == "exited":
            capture.failure.exit_code = capture.exit_code
    return capture


async def _end(transport: StdioTransport, capture: Capture, started: float | None = None,
               workdir: contextlib.ExitStack | None = None) -> None:
    """End the server, record its exit code, then release the working directory."""
    try:
        capture.exit_code = await transport.close()
    finally:
        if workdir is not None:
            workdir.close()
    if started is not None:
        _read_transport(transport, capture, started)


def _read_transport(transport: StdioTransport, capture: Capture, started: float) -> None:
    capture.stderr_tail = transport.stderr_tail()
    capture.noise_lines = transport.noise_lines
    capture.noise_sample = transport.noise_sample
    capture.elapsed_seconds = round(time.monotonic() - started, 3)


def _refuse_names(target: Target) -> None:
    """Refuse a ``set_env`` name that would run code (``envnames``). Raises ``SpawnError``."""
    for name, _ in target.set_env:
        if (why := envnames.shape_problem(name)) is not None:
            raise SpawnError(f"environment variable {name!r} {why}")
        if (why := envnames.runs_code(name)) is not None:
            raise SpawnError(f"environment variable {name!r} is refused: it {why}")


def isolated_argv(argv: list[str], env: dict, cwd: Path, isolation: str, target: Target,
                  verbatim: bool = False) -> tuple[list[str], dict, tuple[int, ...]]:
    """``(argv, env, inherited descriptors)`` for the isolation mode. Raises ``SpawnError``."""
    if isolation == "sandbox":
        resolved = argv if verbatim else resolve_argv(argv, sandbox.sandbox_path(env["PATH"]))
        cache = sandbox.server_cache(target.name, target.launch)
        shown = sandbox.shown_dirs(target.host_dirs)
        start = _vouched_start(target.cwd, shown)
        encode = sandbox.env_args_verbatim if verbatim else sandbox.env_args
        return _with_memory_file(encode, env, lambda fd: sandbox.bwrap_argv(
            resolved, cwd, cache, fd, shown=shown, start=start, files=target.host_files), {})
    if isolation == "docker":
        image = sandbox.docker_image_for(argv[0])
        names = list(target.env) + [name for name, _ in target.set_env]
        values = {name: env[name] for name in names}
        return _with_memory_file(sandbox.env_file_text, values, lambda fd: resolve_argv(
            sandbox.docker_argv(argv, names, image, env_file=f"/dev/fd/{fd}"), env["PATH"]), server_env.child_env())
    # verbatim: the program is found on the launch's own PATH at exec, as its launcher would find it.
    # Through the clean intermediate: the server's parent holds only the server's own environment.
    return through_intermediate(list(argv) if verbatim else resolve_argv(argv, env["PATH"])), env, ()


def _vouched_start(cwd: str | None, shown: tuple[str, ...]) -> Path | None:
    """Under the sandbox, ``cwd`` when it lies in a shown directory, else ``None``."""
    if not cwd:
        return None
    real = os.path.realpath(cwd)
    return Path(real) if any(real == d or real.startswith(d.rstrip("/") + "/")
                             for d in map(os.path.realpath, shown)) else None


def _with_memory_file(encode, values: dict, build, launcher_env: dict) -> tuple[list[str], dict, tuple[int, ...]]:
    fd = None
    try:
        data = encode(values)
        fd = os.memfd_create("mcp-context-cost-env", os.MFD_CLOEXEC)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
        return build(fd), launcher_env, (fd,)
    except BaseException as exc:
        if fd is not None:
            os.close(fd)
        if isinstance(exc, (sandbox.SandboxUnavailable, ValueError, OSError)):
            raise SpawnError(str(exc)) from None
        raise
