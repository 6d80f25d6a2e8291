"""Spawning a server process and ending it — with every child and grandchild — every time.

The child runs in its own session (``start_new_session``), so its process group id is its pid and
one ``killpg`` reaches everything it forked without leaving the group. A grandchild that calls
``setsid`` leaves the group; those are found by walking ``/proc`` for descendants before the kill.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
from pathlib import Path


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


async def spawn(argv: list[str], env: dict[str, str], cwd: Path, stream_limit: int) -> asyncio.subprocess.Process:
    """Start ``argv`` (already resolved) with pipes on stdin/stdout/stderr in a new session.

    Raises ``SpawnError`` when the OS refuses to start it.
    """
    global _PARENT_PID
    _PARENT_PID = os.getpid()
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(cwd),
            start_new_session=True,
            limit=stream_limit,
            preexec_fn=_die_with_parent,
        )
    except OSError as exc:
        raise SpawnError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None


def _load_prctl():
    # Resolved once at import: importing or loading libraries between fork and exec can deadlock
    # in a multithreaded parent.
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
_PARENT_PID = os.getpid()
PR_SET_PDEATHSIG = 1


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


def descendants(root: int) -> set[int]:
    """PIDs of every live process descended from ``root`` (read from ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may contain spaces; ppid follows the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


async def terminate(proc: asyncio.subprocess.Process, grace: float = 2.0) -> int | None:
    """End ``proc``, its process group and every descendant; return its exit code.

    Order (MCP stdio shutdown, then force): close stdin, wait briefly, SIGTERM the group, wait
    ``grace`` seconds, SIGKILL the group and every descendant found before the first signal.
    Never raises for processes that are already gone.
    """
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
    await _wait(proc, grace)
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
