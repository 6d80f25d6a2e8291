"""A watcher that ends a launch's processes when the harness dies without ending them itself.

Two parent-death signals guard a SIGKILLed harness: ``PR_SET_PDEATHSIG`` set in every launched child
(``process._die_with_parent``), and under ``sandbox`` bubblewrap's own ``--die-with-parent``, which
bubblewrap arms in the child it clones *after* the clone. A harness killed while a launch is in
that window (two launches start together since issue #16, so one is often there when the other's
server is up) leaves the cloned bubblewrap alive — re-parented, no signal armed — and it goes on to
start the server. Found by the review of issue #16 (``test_sigkill…[sandbox]`` survivor).

So the first launch of a process starts one sentinel: a detached Python process (its own session,
not a descendant of the harness) reading a pipe whose only write end the harness holds. The
launched child writes ``+<pgid>`` before it execs (its process group: everything bubblewrap clones
stays in it) and ``-<pgid>`` once the launch has been ended (``process.terminate``). When the pipe
reaches end of file — the harness exited or was killed — the sentinel SIGKILLs every group still
listed, for a short while (a process mid-fork is caught by a later round), then exits. A harness
that ended its launches leaves nothing listed, and the sentinel just exits.
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
    """The write end of this process's sentinel pipe (starting the sentinel on first use), for
    :func:`list_self` in a child about to exec; ``None`` when no sentinel can be started (the other
    guards remain). Never raises."""
    if _state.get("pid") != os.getpid() and not _start():  # none yet, or inherited across a fork
        return None
    return _state["fd"]


def line_for(tracker: reaper.Tracker) -> bytes:
    """What :func:`list_self` writes for a launch tracked by ``tracker``, the pid left to fill in:
    its marker token (what leaves the group still carries it) and its cgroup, if any."""
    return b"+%%d %s %s\n" % (tracker.token.encode("ascii"), os.fsencode(tracker.cgroup or "-"))


def list_self(fd: int | None, line: bytes) -> None:
    """In a child between fork and exec, already leader of its own session: list its launch
    (``line``, from :func:`line_for`) with the sentinel before it can start anything, so no moment
    exists where the harness could die with the launch unlisted. One ``write``; never raises."""
    if fd is not None:
        try:
            os.write(fd, line % os.getpid())
        except OSError:
            pass


def release(pgid: int) -> None:
    """Unlist ``pgid``: its launch has been ended (call after the last signal to its group)."""
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
