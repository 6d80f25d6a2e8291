"""Every process a launch starts is gone when it ends: a ``Tracker`` per launch, and a sentinel for a harness
that dies. docs/SECURITY.md, "Every process ends with its measurement".
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

MARKER = "MCP_CONTEXT_COST_LAUNCH"
MODE_VARIABLE = "MCP_CONTEXT_COST_PROCESS_TRACKING"
CGROUP_PREFIX = "mcp-context-cost-"
PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS = 100  # of SIGKILL sweeps, 20 ms apart: a fork loop cannot outrun them all


def _load_prctl():
    # Resolved once at import: importing or loading libraries between fork and exec can deadlock
    # in a multithreaded parent.
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


PRCTL = _load_prctl()


class Tracker:
    """One launch's processes, tracked by cgroup or by marker (``mode``)."""

    def __init__(self, use_cgroup: bool | None = None):
        self.token = secrets.token_hex(8)
        if use_cgroup is None:
            use_cgroup = os.environ.get(MODE_VARIABLE, "auto") != "proc"
        self.cgroup = _new_cgroup(self.token) if use_cgroup else None
        self._procs_fd = _open_procs(self.cgroup)
        self.root_pid: int | None = None

    @property
    def mode(self) -> str:
        return "cgroup" if self.cgroup is not None else "proc"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` plus the marker variable (set last: an entry cannot override it)."""
        return {**base, MARKER: self.token}

    def preexec(self) -> None:
        """In the child before exec: join the cgroup, become a subreaper. Must not allocate a lock."""
        if self._procs_fd is not None:
            try:
                os.write(self._procs_fd, b"0")
            except OSError:
                pass  # not allowed to move here after all; ``started`` notices
        if PRCTL is not None:
            PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def started(self, pid: int) -> None:
        """After the spawn: remember the root; an empty cgroup is dropped for ``proc`` tracking."""
        self.root_pid = pid
        if self._procs_fd is not None:
            os.close(self._procs_fd)
            self._procs_fd = None
        if self.cgroup is not None and not self._cgroup_pids():
            self.discard()

    def members(self, root_alive: bool = True) -> set[int]:
        """Live processes of this launch."""
        if self.cgroup is not None:
            return self._cgroup_pids()
        found = descendants(self.root_pid) | {self.root_pid} if self.root_pid and root_alive else set()
        return {pid for pid in found | marked(self.token) if alive(pid)}

    async def kill(self, root_alive: bool = True) -> None:
        """SIGKILL every member, sweeping until none is left or ``KILL_ROUNDS``. Never raises."""
        for _ in range(KILL_ROUNDS):
            if self.cgroup is not None:
                _write(self.cgroup / "cgroup.kill", "1")  # kernel 5.14+; the sweep below covers older ones
            left = self.members(root_alive)
            if not left:
                return
            for pid in left:
                _signal(pid, signal.SIGKILL)
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        """Remove the cgroup once it is empty (waiting at most 2 s)."""
        ends = time.monotonic() + 2.0
        while self.cgroup is not None and self._cgroup_pids() and time.monotonic() < ends:
            await asyncio.sleep(0.02)
        self.discard()

    def discard(self) -> None:
        """Close the cgroup's descriptor and remove the (empty) cgroup."""
        if self._procs_fd is not None:
            os.close(self._procs_fd)
            self._procs_fd = None
        if self.cgroup is not None:
            try:
                self.cgroup.rmdir()
            except OSError:
                pass
            self.cgroup = None

    def _cgroup_pids(self) -> set[int]:
        try:
            text = (self.cgroup / "cgroup.procs").read_text() if self.cgroup else ""
        except OSError:
            return set()
        return {int(line) for line in text.split()}


def descendants(root: int | None) -> set[int]:
    """PIDs of every live process descended from ``root``, from ``/proc``."""
    if root is None:
        return set()
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may contain spaces; ppid follows the last ')'.
        fields = stat[stat.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def marked(token: str) -> set[int]:
    """PIDs whose initial environment holds ``MARKER=token`` (processes of this user only)."""
    needle = f"{MARKER}={token}".encode()
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[0] not in ("Z", "X")


def _new_cgroup(token: str) -> Path | None:
    parent = own_cgroup()
    if parent is None:
        return None
    _remove_stale(parent)
    path = parent / f"{CGROUP_PREFIX}{os.getpid()}-{token}"
    try:
        path.mkdir()
    except OSError:
        return None
    if not os.access(path / "cgroup.procs", os.W_OK):
        path.rmdir()
        return None
    return path


def own_cgroup() -> Path | None:
    mount = None
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if right.split(" ", 1)[0] == "cgroup2":
                mount = left.split()[4]
                break
        own = next((line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines()
                    if line.startswith("0::")), None)
    except OSError:
        return None
    if mount is None or own is None:
        return None
    path = Path(mount) / own.lstrip("/")
    return path if path.is_dir() and os.access(path, os.W_OK) else None


def _remove_stale(parent: Path) -> None:
    try:
        stale = [p for p in parent.glob(f"{CGROUP_PREFIX}*") if not _pid_alive(p.name[len(CGROUP_PREFIX):].split("-")[0])]
    except OSError:
        return
    for path in stale:
        try:
            path.rmdir()
        except OSError:
            pass


def _pid_alive(text: str) -> bool:
    return text.isdigit() and alive(int(text))


def _open_procs(cgroup: Path | None) -> int | None:
    if cgroup is None:
        return None
    try:
        return os.open(cgroup / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
    except OSError:
        return False
    return True


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# --- the sentinel: a detached watcher that SIGKILLs what is still listed when the harness dies -------
# It covers the window where bubblewrap has cloned but not yet armed --die-with-parent: the child
# writes +<pgid> before exec, the harness -<pgid> once ended; at end of file the sentinel kills the rest.

SENTINEL_KILL_SECONDS = 2.0  # how long the sentinel keeps killing the groups left listed

_SENTINEL_SCRIPT = r'''
import os, signal, sys, time
if os.fork():  # detach: the harness waits for this parent only
    os._exit(0)
launches = {}  # pgid -> (marker variable as it appears in /proc/<pid>/environ, cgroup or "-")
for line in sys.stdin.buffer:  # until the harness's write end is closed, by exit or by death
    parts = line[1:].split()
    if line[:1] == b"+" and len(parts) == 3 and parts[0].isdigit():
        launches[int(parts[0])] = (b"%s=%s\0" % (sys.argv[2].encode(), parts[1]), parts[2].decode())
    elif line[:1] == b"-" and parts and parts[0].isdigit():
        launches.pop(int(parts[0]), None)
def kill(pid, group=False):
    try:
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)
    except OSError:
        pass
markers = [marker for marker, _ in launches.values()]
ends = time.monotonic() + float(sys.argv[1])
while launches and time.monotonic() < ends:  # rounds: a process mid-fork is caught by a later one
    for pgid, (_, cgroup) in launches.items():
        kill(pgid, group=True)
        if cgroup != "-":
            try:
                open(os.path.join(cgroup, "cgroup.kill"), "w").write("1")
            except OSError:
                pass
    for entry in os.listdir("/proc"):  # what left the group (setsid, setpgid) still carries the marker
        try:
            environ = open(f"/proc/{entry}/environ", "rb").read() if entry.isdigit() else b""
        except OSError:
            continue
        if any(environ.startswith(m) or b"\0" + m in environ for m in markers):
            kill(int(entry))
    time.sleep(0.02)
'''

_sentinel: dict[str, int] = {}  # "fd": the write end; "pid": the harness process that started it


def sentinel_writer() -> int | None:
    """The write end of this process's sentinel pipe, starting it on first use; ``None`` if it cannot."""
    if _sentinel.get("pid") != os.getpid() and not _sentinel_start():  # none yet, or inherited across a fork
        return None
    return _sentinel["fd"]


def sentinel_line(tracker: Tracker) -> bytes:
    """What :func:`sentinel_list` writes for a launch tracked by ``tracker``, the pid left to fill in."""
    return b"+%%d %s %s\n" % (tracker.token.encode("ascii"), os.fsencode(tracker.cgroup or "-"))


def sentinel_list(fd: int | None, line: bytes) -> None:
    """In a child before exec: list its launch with the sentinel. Never raises."""
    if fd is not None:
        try:
            os.write(fd, line % os.getpid())
        except OSError:
            pass


def sentinel_release(pgid: int) -> None:
    """Unlist ``pgid`` once its launch has been ended."""
    if _sentinel.get("pid") == os.getpid():
        _sentinel_send(f"-{pgid}\n")


def _sentinel_send(text: str) -> None:
    try:
        os.write(_sentinel["fd"], text.encode("ascii"))
    except OSError:
        _sentinel.clear()


def _sentinel_start() -> bool:
    read_end, write_end = os.pipe()  # both close-on-exec: no launched server inherits the write end
    try:
        argv = [sys.executable, "-I", "-S", "-c", _SENTINEL_SCRIPT, str(SENTINEL_KILL_SECONDS), MARKER]
        helper = subprocess.Popen(argv,
                                  stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True, env={})
        helper.wait(10)
    except (OSError, subprocess.SubprocessError):
        os.close(write_end)
        return False
    finally:
        os.close(read_end)
    _sentinel.update(fd=write_end, pid=os.getpid())
    return True
