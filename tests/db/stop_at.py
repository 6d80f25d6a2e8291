"""Run ``mcp-context-cost`` in this process, pausing it at one publish step, so a test can interrupt a
real sweep exactly there.

    python -m tests.db.stop_at STEP RELEASE sweep --root REPO --commit ...

Tests drive it with :class:`Stopped` (below). How a step is reached cleanly. Every publish records each step in its journal before doing it
(``harness.db.journal.Journal.advance``: promoting, history, regen, commit, done). This wrapper
wraps that one method: right after the journal says STEP — so the journal on disk names it, and
nothing of the step has been done — it prints ``STOPPED AT <STEP> <journal path>`` on stderr and
sleeps until the file RELEASE exists (``-``: forever). The test then sends SIGINT or SIGKILL to this
real process, or creates RELEASE to let it go on. Nothing in the harness knows about this file.

Two more places to stop, inside a step:

* ``regen-writing`` — inside regen, after every new page is written to its temporary sibling and
  flushed, before the first is renamed into place (``harness.util.atomic.write_many``): a kill here
  leaves ``.<page>.<random>.tmp`` files in ``docs/``;
* ``measuring`` is reached without this wrapper: a test waits for a staged record to appear while
  a slow server is still being measured.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _pause(label: str, where: str, release: str) -> None:
    print(f"STOPPED AT {label} {where}", file=sys.stderr, flush=True)
    while release == "-" or not os.path.exists(release):
        time.sleep(0.02)


def main(argv: list[str]) -> int:
    step, release, args = argv[0], argv[1], argv[2:]
    from harness.db import journal
    from harness.util import atomic

    if step == "regen-writing":
        real_replace = atomic.os.replace
        paused = []

        def replace(src, dst, *rest, **kw):
            target = Path(dst)
            if not paused and "docs" in target.parts and ".staging" not in target.parts:
                paused.append(target)
                _pause(step, str(target), release)
            return real_replace(src, dst, *rest, **kw)

        atomic.os.replace = replace  # os.replace for everyone; only the first rename into docs/ pauses
    else:
        real_advance = journal.Journal.advance

        def advance(self, name, **fields):
            real_advance(self, name, **fields)
            if name == step:
                _pause(step, str(self.run_dir / journal.JOURNAL), release)

        journal.Journal.advance = advance
    from harness.cli import main as cli_main

    return cli_main(args)


def interruptible() -> None:
    """``preexec_fn`` for a process a test will SIGINT: a shell runs background jobs (``cmd &``)
    with SIGINT ignored, and a child inherits that; with the default disposition Python turns
    SIGINT into ``KeyboardInterrupt``, as at a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Lines:
    """Reads a process's stderr on a thread; ``wait_for(text)`` blocks until a line contains it and
    returns that line (``None`` when the stream ended or ``timeout`` seconds passed first)."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[str | None] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc) -> None:
        for line in proc.stderr:
            with self._cv:
                self.lines.append(line.rstrip("\n"))
                self._cv.notify_all()
        with self._cv:
            self.lines.append(None)
            self._cv.notify_all()

    def wait_for(self, text: str, timeout: float = 120.0) -> str | None:
        ends = time.monotonic() + timeout
        with self._cv:
            while True:
                found = next((line for line in self.lines if line is not None and text in line), None)
                if found is not None or None in self.lines:
                    return found
                if not self._cv.wait(max(0.0, ends - time.monotonic())):
                    return None

    def text(self) -> str:
        return "\n".join(line for line in self.lines if line is not None)


class Stopped:
    """``with Stopped(step, release, root, *sweep_args) as run:`` — a real sweep process paused at
    ``step`` (``run.stopped_at`` is the path it printed); ``run.signal(sig)``, ``run.wait()``."""

    def __init__(self, step: str, release: Path | str, root: Path, *args: str, command: str = "sweep"):
        self.argv = [sys.executable, "-m", "tests.db.stop_at", step, str(release), command, "--root", str(root), *args]

    def __enter__(self) -> "Stopped":
        self.proc = subprocess.Popen(self.argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True, preexec_fn=interruptible)
        self.lines = Lines(self.proc)
        line = self.lines.wait_for("STOPPED AT ")
        assert line is not None, self.err()
        self.stopped_at = line.split(" ", 3)[3]
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def signal(self, sig: int) -> int:
        if sig == signal.SIGKILL:
            os.killpg(self.proc.pid, sig)
        else:
            os.kill(self.proc.pid, sig)
        return self.proc.wait(60)

    def wait(self) -> int:
        code = self.proc.wait(120)
        self.lines.wait_for("\0never\0", timeout=10)  # drain stderr
        return code

    def err(self) -> str:
        return self.lines.text()


def journal_of(path: str) -> dict:
    """The journal file at ``path``, parsed."""
    return json.loads(Path(path).read_text())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
