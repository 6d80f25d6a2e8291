"""The leaderboard's rows, one per catalog entry, in published order: :func:`build_rows`, :class:`Row`,
and a record's session-start load (:func:`for_record`). Order: docs/PAGES.md, "Leaderboard".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from harness.core import bands
from harness.core.counting import session_start_load
from harness.core.record import NUMBERED, STATUSES, Record
from harness.db import failure_reason
from harness.db.catalog import Catalog, Entry
from harness.pages.text import as_int, num, one_line
from harness.probe.status import NOT_APPLICABLE, NOT_MEASURED_HERE, NOT_YET_RUN, UNREACHABLE

NOT_YET_RUN_NOTE = "not swept yet: no measurement on record"


@dataclass(frozen=True)
class Row:
    entry: Entry
    status: str
    record: Record | None = None
    rank: int | None = None
    tokens: int | None = None
    tool_count: int | None = None
    largest: tuple[str, int] | None = None  # (tool name as one line, tokens)
    session: SessionLoad | None = None
    notes: tuple[str, ...] = field(default=())
    readings: object = None  # readings.Readings: figures beside the headline

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def band(self) -> tuple[str, str]:
        """``(shields colour, label)`` of the headline; lightgrey / "not measured" without one."""
        return bands.band_for(self.tokens)

    @property
    def group(self) -> str:
        """Ranked, failed, or not measured here (:func:`group`)."""
        return group(self.status, self.record)

    @property
    def defers_costlier(self) -> bool:
        """Session-start load above the headline: deferring costs more than loading it all."""
        return self.session is not None and self.tokens is not None and self.session.exceeds(self.tokens)

    @property
    def fields(self) -> Mapping[str, Any]:
        """The record, or an empty mapping for an entry without one."""
        return self.record or {}

    @property
    def isolation(self) -> dict[str, Any]:
        iso = self.record.get("isolation") if self.record else None
        return dict(iso) if isinstance(iso, dict) else {}


def build_rows(catalog: Catalog, records: dict[str, Record]) -> list[Row]:
    """Rows for every entry of ``catalog`` (``records`` maps entry name → parsed record)."""
    ranked: list[Row] = []
    others: list[Row] = []
    for entry in catalog.entries:
        record = records.get(entry.name)
        row = _row(entry, record)
        (ranked if row.status in NUMBERED else others).append(row)
    ranked.sort(key=lambda r: (-(r.tokens or 0), r.name))  # ranked rows all have tokens
    others.sort(key=lambda r: (STATUSES.index(r.status), r.name))
    out, rank = [], 0
    for k, r in enumerate(ranked):
        if not k or ranked[k - 1].tokens != r.tokens:
            rank = k + 1
        out.append(_with_rank(r, rank))
    return out + others


def _with_rank(row: Row, rank: int) -> Row:
    return replace(row, rank=rank)


def _row(entry: Entry, record: Record | None) -> Row:
    if record is None:
        return Row(entry, NOT_YET_RUN, notes=(NOT_YET_RUN_NOTE,))
    status = record["status"]
    notes = tuple(one_line(n) for n in record.get("notes") or [] if one_line(n))
    if status not in NUMBERED:
        return Row(entry, status, record, notes=notes)
    return Row(entry, status, record, tokens=as_int(record["totalTokens"]),
               tool_count=as_int(record["toolCount"]), largest=_largest(record),
               session=for_record(record), notes=notes)


def _largest(record: Record) -> tuple[str, int] | None:
    """The per-tool diagnostic with the most tokens; ties go to the name sorting first."""
    best = None
    for tool in record.get("tools") or []:
        tokens = as_int(tool.get("tokens")) if isinstance(tool, dict) else None
        if tokens is None:
            continue
        key = (-tokens, one_line(tool.get("name")))
        if best is None or key < best:
            best = key
    return None if best is None else (best[1], -best[0])


NOT_MEASURED_HERE_NOTE = ("not-measured-here: the measuring machine failed (name resolution, runtime version, a "
                          "blocked download, the package registry or a package cache another process held), not the "
                          "server; such a failure never replaces a server's earlier record")


def machine_note(rows: list[Row]) -> str:
    """``NOT_MEASURED_HERE_NOTE`` when a row has that status, else ``""`` (one home for the label)."""
    return NOT_MEASURED_HERE_NOTE if any(r.status == NOT_MEASURED_HERE for r in rows) else ""


def status_counts(rows: list[Row]) -> dict[str, int]:
    """``{status: count}`` for every status, in the taxonomy's order (zeros kept)."""
    counts = {status: 0 for status in STATUSES}
    for row in rows:
        counts[row.status] += 1
    return counts


# Statuses that say nothing about the server: the measuring machine could not run or reach it
# (no network to the host, a runtime this machine lacks, not swept yet). So does any failure whose
# record carries environment evidence (the machine's network or toolchain, harness.db.failure_reason).
# Every other status without a number is a failure of the server, and a finding.
MACHINE_STATUSES = (UNREACHABLE, NOT_MEASURED_HERE, NOT_APPLICABLE, NOT_YET_RUN)
RANKED, FAILED, MACHINE = "ranked", "failed", "machine"
GROUP_LABELS = {RANKED: "Ranked", FAILED: "Failed", MACHINE: "Not measured here"}


def group(status: str, record: Record | None = None) -> str:
    """The dashboard's group of a status (and its record): ranked (has a number), failed, or not
    measured here."""
    if status in NUMBERED:
        return RANKED
    if status in MACHINE_STATUSES or (record is not None and failure_reason.is_environment(record)):
        return MACHINE
    return FAILED


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


def for_record(record: Record) -> SessionLoad | None:
    """The session-start load of a measured/dynamic ``record``; ``None`` when it has no capture."""
    tools = record.get("rawToolsCapture")
    if not isinstance(tools, list):
        return None
    instructions = record.get("serverInstructions", _ABSENT)
    if isinstance(instructions, str):
        load = session_start_load(tools, instructions)
        assert load.totalTokens is not None, "instructions were given"
        return SessionLoad(load.namesTokens, load.instructionsTokens, load.totalTokens, False)
    load = session_start_load(tools, None)
    if instructions is None:  # the server sent none: that half is 0
        return SessionLoad(load.namesTokens, 0, load.namesTokens, False)
    return SessionLoad(load.namesTokens, None, load.namesTokens, True)  # not captured: a floor
