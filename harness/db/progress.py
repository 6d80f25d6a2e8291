"""Sweep progress: a live bar on a terminal (rich), plain lines in CI or when piped. Every line
passes through ``harness.util.untrusted.line`` (a note quotes what a server said)."""

from __future__ import annotations

import sys

from harness.util import untrusted


class Progress:
    """``start(total)``, ``begin(name)``, ``done(name, status, detail)``, ``close()``.

    On a TTY a rich progress bar shows counts and the servers in flight; otherwise one plain line
    per finished server (``[3/12] memory: measured 2,378 tokens``) goes to ``stream``.
    """

    def __init__(self, stream=None, live: bool | None = None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.total = self.finished = 0
        self.running: list[str] = []
        self._bar = None

    def start(self, total: int) -> None:
        self.total = total
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn

            self._bar = Bar(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            TextColumn("{task.description}"), console=Console(file=self.stream))
            self._bar.start()
            self._task = self._bar.add_task("", total=total)

    def begin(self, name: str) -> None:
        self.running.append(name)
        self._refresh()

    def done(self, name: str, status: str, detail: str = "") -> None:
        self.finished += 1
        if name in self.running:
            self.running.remove(name)
        line = untrusted.line(f"[{self.finished}/{self.total}] {name}: {status}" + (f" {detail}" if detail else ""))
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
            self._bar.update(self._task, completed=self.finished)
            self._refresh()
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()

    def _refresh(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=untrusted.escape("measuring: " + ", ".join(self.running[:4])))
