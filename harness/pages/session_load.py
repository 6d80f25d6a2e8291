"""Session-start load of a published record (methodology, "Session-start load"; deferred-load/v1).

Two halves, counted separately with o200k_base and summed (never tokenized joined):
the JSON text of the tool-name array from ``rawToolsCapture``, and the ``instructions`` string the
server sent at initialize (record field ``serverInstructions``).

Three cases, by the record's ``serverInstructions``:

* a string → both halves; the load is a figure;
* ``null`` → the server sent none; that half counts 0 and the load is a figure;
* field absent (a record older than the field) → instructions were never captured; the names half
  alone is published as a floor, shown ``≥ N`` (so is a value that is neither, which no schema
  allows: what it would add is unknown).

Computed at regen time from the record itself, so it is never stale relative to the capture.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.counting import session_start_load
from harness.pages.text import num

_ABSENT = object()


@dataclass(frozen=True)
class SessionLoad:
    names: int
    instructions: int | None  # None: not captured
    tokens: int  # the figure, or the floor when ``floor``
    floor: bool

    def label(self) -> str:
        """``"1,234"`` for a figure, ``"≥ 56"`` for a floor."""
        return ("≥ " if self.floor else "") + num(self.tokens)

    def exceeds(self, headline: int) -> bool:
        """Does deferring cost more than loading every definition (``headline`` tokens)?
        A floor above the headline proves it too."""
        return self.tokens > headline


def for_record(record: dict) -> SessionLoad | None:
    """The session-start load of a measured/dynamic ``record``; ``None`` when it has no capture."""
    tools = record.get("rawToolsCapture")
    if not isinstance(tools, list):
        return None
    instructions = record.get("serverInstructions", _ABSENT)
    if isinstance(instructions, str):
        load = session_start_load(tools, instructions)
        return SessionLoad(load.namesTokens, load.instructionsTokens, load.totalTokens, False)
    load = session_start_load(tools, None)
    if instructions is None:  # the server sent none: that half is 0
        return SessionLoad(load.namesTokens, 0, load.namesTokens, False)
    return SessionLoad(load.namesTokens, None, load.namesTokens, True)  # not captured: a floor
