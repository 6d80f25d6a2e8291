"""Sweep progress: a live ``rich`` display on a terminal, one whole line per server elsewhere;
names and reasons through ``untrusted.line``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

import sys

from harness.util.untrusted import line as safe_line

# Width the bar, the counts and the clock take on the live line; the names in flight get the rest.
_FIXED_COLUMNS = 48

if TYPE_CHECKING:  # rich is imported when a live display starts
    from rich.progress import Progress as Bar, TaskID


class Progress:
    """``start(total)``, ``begin(name)``, ``done(name, status, detail)``, ``close()``; ``live`` defaults
    to whether ``stream`` is a terminal.
    """

    def __init__(self, stream: TextIO | None = None, live: bool | None = None, width: int | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = is_terminal(self.stream) if live is None else live
        self.width = width
        self.total = self.finished = 0
        self.running: list[str] = []
        self._bar: Bar | None = None
        self._task: TaskID | None = None

    def start(self, total: int) -> None:
        self.total = total
        if not self.live:
            return
        # rich loads only for a live display on a terminal
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn
        from rich.table import Column

        console = Console(file=self.stream, width=self.width, highlight=False, emoji=False)
        self._bar = Bar(TextColumn("sweep"), BarColumn(bar_width=20), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis")),
                        console=console, transient=True)
        self._bar.start()
        self._task = self._bar.add_task("", total=total)

    def begin(self, name: str) -> None:
        self.running.append(name)
        self._refresh()

    def done(self, name: str, status: str, detail: str = "") -> None:
        self.finished += 1
        if name in self.running:
            self.running.remove(name)
        text = f"[{self.finished}/{self.total}] {safe_line(name)}: {safe_line(status)}"
        if detail:
            text += f" — {safe_line(detail)}"
        if self._bar is None:
            print(text, file=self.stream, flush=True)
            return
        from rich.text import Text  # loaded by start() already: a live display is on

        self._bar.console.print(Text(text, overflow="fold"))
        self._bar.update(self._task_id(), completed=self.finished)
        self._refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _task_id(self) -> TaskID:
        assert self._task is not None  # set with _bar
        return self._task

    def _refresh(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task_id(), description=in_flight(self.running, self._bar.console.width - _FIXED_COLUMNS))


def in_flight(names: list[str], width: int) -> str:
    """``measuring: a, b +2 more`` in at most ``width`` characters, whole names only."""
    if not names:
        return ""
    shown: list[str] = []
    for index, name in enumerate(names):
        rest = len(names) - index - 1
        candidate = "measuring: " + ", ".join(shown + [safe_line(name)]) + (f" +{rest} more" if rest else "")
        if len(candidate) > width and shown:
            break
        shown.append(safe_line(name))
    hidden = len(names) - len(shown)
    return "measuring: " + ", ".join(shown) + (f" +{hidden} more" if hidden else "")


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
