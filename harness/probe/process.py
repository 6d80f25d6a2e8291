"""Spawning a server in its own session, through a clean intermediate for ``host``, and ending it with every
descendant.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import select
import shlex
import shutil
import signal
import sys
from collections.abc import Callable

from harness.probe import reaper
from harness.probe.dumpable import not_dumpable
from harness.probe.reaper import descendants  # noqa: F401 - re-exported for callers and tests


class SpawnError(Exception):
    """The launch command could not be started; ``str()`` says why."""


# Called (no arguments, raising nothing) each time :func:`spawn` has started a child in this context (measure's
# warm-up starts its heavy part beside the install's process then).
AFTER_SPAWN: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("after_spawn", default=None)


def split_command(command: str) -> list[str]:
    """Split a command line as a POSIX shell would; ``SpawnError`` for empty or unbalanced."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise SpawnError(f"cannot split command {command!r}: {exc}") from None
    if not argv:
        raise SpawnError("empty command")
    return argv


def resolve_argv(argv: list[str], path: str) -> list[str]:
    """``argv`` with ``argv[0]`` found on the child's ``PATH``; raises ``SpawnError`` when it is not."""
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
    """Start ``argv`` with pipes in a new session, tracked until ``terminate``. Raises ``SpawnError``."""
    global _PARENT_PID
    _PARENT_PID = os.getpid()
    not_dumpable()
    argv, status = _with_status_pipe(argv)
    if status is not None:
        pass_fds = (*pass_fds, status[1])
    tracker = reaper.Tracker()
    # the child lists its own launch: no moment where the harness could die with it unlisted
    listed, line = reaper.sentinel_writer(), reaper.sentinel_line(tracker)

    def before_exec() -> None:
        _die_with_parent()
        tracker.preexec()
        reaper.sentinel_list(listed, line)

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
        if status is not None:
            os.close(status[0])
        raise SpawnError(f"cannot start {_program(argv)}: {getattr(exc, 'strerror', None) or exc}") from None
    finally:
        if status is not None:
            os.close(status[1])  # the intermediate holds its own copy
    tracker.started(proc.pid)
    _TRACKERS[proc.pid] = tracker
    if (after := AFTER_SPAWN.get()) is not None:
        after()
    if status is not None:
        try:
            failed = await asyncio.get_running_loop().run_in_executor(None, _read_status, status[0])
        except BaseException:  # cancelled while the server was being started: nobody else can end it
            await terminate(proc)
            raise
        if failed is not None:
            await terminate(proc)
            raise SpawnError(f"cannot start {_program(argv)}: {failed}")
    return proc


# --- the clean intermediate of a host launch ------------------------------------------------------
# argv: [python, -I, -S, -c, script, <status fd>, server argv...]. It ignores the group's SIGTERM,
# SIGINT and SIGHUP (they reach the server through the process group; a handler, unlike SIG_IGN, is
# reset by exec), forks the server with a parent-death signal, reports an exec failure on the status
# descriptor (the exec closes it otherwise), lets go of the stdio pipes, reaps whatever is re-parented
# to it (the launch made it a child subreaper) and ends as the server ended: same code, same signal.
_INTERMEDIATE = r'''
import os, signal, sys
status, argv = int(sys.argv[1]), sys.argv[2:]
try:
    import ctypes
    prctl = ctypes.CDLL(None, use_errno=True).prctl
except (ImportError, OSError, AttributeError):  # no ctypes, or no prctl (not Linux)
    prctl = None
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, lambda *_: None)
me = os.getpid()
pid = os.fork()
if pid == 0:
    try:
        if prctl is not None:
            prctl(1, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != me:
            os._exit(137)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        os.set_inheritable(status, False)
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(status, (exc.strerror or str(exc)).encode("utf-8", "replace")[:500])
    os._exit(127)
os.close(status)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
while True:
    try:
        done, code = os.waitpid(-1, 0)
    except ChildProcessError:
        os._exit(0)
    if done == pid:
        break
if os.WIFSIGNALED(code):
    try:
        signal.signal(os.WTERMSIG(code), signal.SIG_DFL)
    except (OSError, ValueError):
        pass
    os.kill(me, os.WTERMSIG(code))
os._exit(os.waitstatus_to_exitcode(code) & 0xFF)
'''
_INTERMEDIATE_PREFIX = ("-I", "-S", "-c", _INTERMEDIATE)
_STATUS_PLACEHOLDER = "--status-fd--"
STATUS_SECONDS = 30.0  # an exec that has not happened by then is taken as started (the deadline rules)


def through_intermediate(argv: list[str]) -> list[str]:
    """``argv`` launched through the clean intermediate."""
    return [sys.executable, *_INTERMEDIATE_PREFIX, _STATUS_PLACEHOLDER, *argv]


def _with_status_pipe(argv: list[str]) -> tuple[list[str], tuple[int, int] | None]:
    if tuple(argv[1:5]) != _INTERMEDIATE_PREFIX or argv[5:6] != [_STATUS_PLACEHOLDER]:
        return argv, None
    read_end, write_end = os.pipe()
    return [*argv[:5], str(write_end), *argv[6:]], (read_end, write_end)


def _program(argv: list[str]) -> str:
    return argv[6] if tuple(argv[1:5]) == _INTERMEDIATE_PREFIX and len(argv) > 6 else argv[0]


def _read_status(fd: int) -> str | None:
    data = b""
    try:
        while len(data) < 1000 and select.select([fd], [], [], STATUS_SECONDS)[0]:
            chunk = os.read(fd, 1000)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace") or None


_PRCTL = reaper.PRCTL
_PARENT_PID = os.getpid()
PR_SET_PDEATHSIG = 1
_TRACKERS: dict[int, reaper.Tracker] = {}


def _die_with_parent() -> None:
    """In the child: SIGKILL it when the harness dies. A no-op without prctl."""
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != _PARENT_PID:
        os._exit(137)


async def terminate(proc: asyncio.subprocess.Process, grace: float = 2.0) -> int | None:
    """End ``proc`` and everything the launch started; return its exit code. Never raises for the gone."""
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
    reaper.sentinel_release(proc.pid)
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
