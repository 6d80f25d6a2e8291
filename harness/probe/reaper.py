"""Every process a launch starts is gone when the launch ends: a ``Tracker`` per launch, by ``cgroup.kill`` where
a cgroup v2 can be made, else (``proc``) by subreaper and a marker variable.
``MCP_CONTEXT_COST_PROCESS_TRACKING=proc`` forces the second. docs/SECURITY.md, "Every process ends with its
measurement".
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
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
    """One launch's processes: ``env``, ``preexec`` (in the child), ``started`` (in the parent), ``kill``,
    ``close`` or ``discard``. ``mode`` is ``"cgroup"`` or ``"proc"``."""

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
        """In the child, between fork and exec: join the cgroup and become a subreaper. Only system calls on an
        open descriptor: nothing here may allocate a lock."""
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
        """Live processes of this launch: the cgroup's, else the marked ones and, while the root is not reaped,
        its descendants."""
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
    """A fresh cgroup v2 directory beside the harness's own, or ``None``."""
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
    """Remove empty cgroups left by harness processes that died (``<prefix><pid>-<token>``)."""
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
