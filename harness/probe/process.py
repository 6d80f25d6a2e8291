"""Spawning a server process and ending it — with every child and grandchild — every time.

The child runs in its own session (``start_new_session``), so its process group id is its pid and
one ``killpg`` reaches everything it forked without leaving the group. What leaves the group (a
grandchild that calls ``setsid``, one re-parented after its parent exited) is tracked by a
``reaper.Tracker`` per launch: a cgroup where one can be made, else subreaper-style tracking.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal

from harness.probe import reaper, sentinel
from harness.probe.reaper import descendants  # noqa: F401 - re-exported for callers and tests


class SpawnError(Exception):
    """The launch command could not be started (not found, not executable). ``str()`` says which."""


def split_command(command: str) -> list[str]:
    """Split a catalog command line into argv the way a POSIX shell would quote it, without a shell.

    Raises ``SpawnError`` for an empty command or unbalanced quotes.
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise SpawnError(f"cannot split command {command!r}: {exc}") from None
    if not argv:
        raise SpawnError("empty command")
    return argv


def resolve_argv(argv: list[str], path: str) -> list[str]:
    """Return ``argv`` with ``argv[0]`` resolved on the child's ``PATH`` (e.g. ``npx``, ``uvx``).

    Raises ``SpawnError`` naming the program when it is not found or not executable.
    """
    program = argv[0]
    if os.sep in program:
        if not os.access(program, os.X_OK):
            raise SpawnError(f"command not found or not executable: {program}")
        return list(argv)
    found = shutil.which(program, path=path)
    if found is None:
        raise SpawnError(f"command not found on PATH: {program}")
    return [found, *argv[1:]]


async def spawn(argv: list[str], env: dict[str, str], cwd: str | os.PathLike, stream_limit: int,
                pass_fds: tuple[int, ...] = ()) -> asyncio.subprocess.Process:
    """Start ``argv`` (already resolved) with pipes on stdin/stdout/stderr in a new session, tracked
    by a ``reaper.Tracker`` until ``terminate``; ``pass_fds`` are inherited (e.g. bwrap's
    ``--args`` descriptor).

    Raises ``SpawnError`` when the OS refuses to start it.
    """
    global _PARENT_PID
    _PARENT_PID = os.getpid()
    tracker = reaper.Tracker()
    # the child lists its own launch: no moment where the harness could die with it unlisted
    listed, line = sentinel.writer(), sentinel.line_for(tracker)

    def before_exec() -> None:
        _die_with_parent()
        tracker.preexec()
        sentinel.list_self(listed, line)

    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=tracker.env(env),
            cwd=str(cwd),
            start_new_session=True,
            limit=stream_limit,
            pass_fds=pass_fds,
            preexec_fn=before_exec,
        )
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument or a variable
        tracker.discard()
        raise SpawnError(f"cannot start {argv[0]}: {getattr(exc, 'strerror', None) or exc}") from None
    tracker.started(proc.pid)
    _TRACKERS[proc.pid] = tracker
    return proc


_PRCTL = reaper.PRCTL
_PARENT_PID = os.getpid()
PR_SET_PDEATHSIG = 1
_TRACKERS: dict[int, reaper.Tracker] = {}


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGKILL it if the harness dies (PR_SET_PDEATHSIG),
    so a SIGKILLed sweep cannot leave a server behind that ignores EOF and SIGTERM. If the harness
    already died between fork and this call (the child was re-parented), exit at once. A no-op
    where prctl is unavailable."""
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != _PARENT_PID:
        os._exit(137)


async def terminate(proc: asyncio.subprocess.Process, grace: float = 2.0) -> int | None:
    """End ``proc``, its process group and every process the launch started; return its exit code.

    Order (MCP stdio shutdown, then force): close stdin, wait briefly, SIGTERM the group, wait
    ``grace`` seconds, SIGKILL the group and every descendant found before the first signal, then
    every member the launch's tracker still finds (cgroup, or descendants and marked processes).
    Never raises for processes that are already gone.
    """
    tracker = _TRACKERS.pop(proc.pid, None)
    family = descendants(proc.pid)
    if proc.stdin and not proc.stdin.is_closing():
        proc.stdin.close()
    if proc.returncode is None:
        await _wait(proc, 0.3)
    if proc.returncode is None:
        _signal_group(proc.pid, signal.SIGTERM)
        await _wait(proc, grace)
    family |= descendants(proc.pid) if proc.returncode is None else set()
    _signal_group(proc.pid, signal.SIGKILL)
    for pid in family:
        _signal_pid(pid, signal.SIGKILL)
    if tracker is not None:
        await tracker.kill(root_alive=proc.returncode is None)
    await _wait(proc, grace)
    if tracker is not None:
        await tracker.close()
    sentinel.release(proc.pid)
    return proc.returncode


async def _wait(proc: asyncio.subprocess.Process, seconds: float) -> None:
    # Polls ``returncode`` rather than awaiting ``proc.wait()``, which also waits for every pipe to
    # close — held open by a surviving grandchild, or never drained once a reader hit a limit.
    ends = asyncio.get_running_loop().time() + seconds
    while proc.returncode is None and asyncio.get_running_loop().time() < ends:
        await asyncio.sleep(0.02)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
