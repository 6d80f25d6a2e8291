"""A detached watcher that SIGKILLs a launch's process groups when the harness dies without ending them: the
window where bubblewrap has cloned but not yet armed ``--die-with-parent``.

The child writes ``+<pgid>`` before exec and the harness ``-<pgid>`` once ended; at end of file on the pipe
the sentinel kills what is still listed.
"""

from __future__ import annotations

import os
import subprocess
import sys

from harness.probe import reaper

KILL_SECONDS = 2.0  # how long the sentinel keeps killing the groups left listed

_SCRIPT = r'''
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

_state: dict[str, int] = {}  # "fd": the write end; "pid": the harness process that started it


def writer() -> int | None:
    """The write end of this process's sentinel pipe (starting the sentinel on first use); ``None`` when none can
    start. Never raises."""
    if _state.get("pid") != os.getpid() and not _start():  # none yet, or inherited across a fork
        return None
    return _state["fd"]


def line_for(tracker: reaper.Tracker) -> bytes:
    """What :func:`list_self` writes for a launch tracked by ``tracker``, the pid left to fill in."""
    return b"+%%d %s %s\n" % (tracker.token.encode("ascii"), os.fsencode(tracker.cgroup or "-"))


def list_self(fd: int | None, line: bytes) -> None:
    """In a child between fork and exec: list its launch with the sentinel before it can start anything. One
    ``write``; never raises."""
    if fd is not None:
        try:
            os.write(fd, line % os.getpid())
        except OSError:
            pass


def release(pgid: int) -> None:
    """Unlist ``pgid`` once its launch has been ended."""
    if _state.get("pid") == os.getpid():
        _send(f"-{pgid}\n")


def _send(text: str) -> None:
    try:
        os.write(_state["fd"], text.encode("ascii"))
    except OSError:
        _state.clear()


def _start() -> bool:
    read_end, write_end = os.pipe()  # both close-on-exec: no launched server inherits the write end
    try:
        helper = subprocess.Popen([sys.executable, "-I", "-S", "-c", _SCRIPT, str(KILL_SECONDS), reaper.MARKER],
                                  stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True, env={})
        helper.wait(10)
    except (OSError, subprocess.SubprocessError):
        os.close(write_end)
        return False
    finally:
        os.close(read_end)
    _state.update(fd=write_end, pid=os.getpid())
    return True
