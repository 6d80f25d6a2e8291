"""Measure catalog entries concurrently into a staging area: ``sweep``, ``settle``. A record is
rewritten only when what it asserts changed (docs/METHODOLOGY.md, 'Statuses', 'Two launches').
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, cast
from pathlib import Path

from harness.core.record import NUMBERED, Record
from harness.core.jsparse import parse
from harness.db import confine, failure_reason
from harness.db.catalog import Entry
from harness.db.journal import Staging
from harness.db.launch_gate import LaunchGate, default_slots, entries_in_flight
from harness.db.progress import Progress
from harness.db.targets import target_for
from harness.probe import build_record as record
from harness.probe import install, harness_bug, isolation, side_lists
from harness.probe import measure as measuring
from harness.probe.measure import measure
from harness.probe.status import NOT_MEASURED_HERE, NOT_YET_RUN
from harness.util import published, schemas



def default_concurrency() -> int:
    return default_slots()


@dataclass
class SweepResult:
    """This sweep's ``records``, ``staged`` paths and ``unchanged`` servers; ``backfill`` and
    ``environment`` records only add a history row.
    """

    records: dict[str, Record]
    staged: list[str]
    unchanged: list[str]
    backfill: dict[str, Record] = field(default_factory=dict)
    environment: dict[str, Record] = field(default_factory=dict)

    def history_records(self) -> dict[str, Record]:
        """The record each server's history row is made from; a kept record measured on this date keeps its row."""
        environment = {server: rec for server, rec in self.environment.items()
                       if _day(self.records.get(server)) != _day(rec)}
        return {**self.records, **self.backfill, **environment}


def _day(record: Mapping[str, Any] | None) -> str:
    return str((record or {}).get("measuredAt", ""))[:10]


async def sweep(entries: list[Entry], root: Path, staging: Staging, date: dt.date, *, concurrency: int,
                progress: Progress, isolation_mode: str = "host", measurer=None,
                stage_unchanged: bool = False, newest: dict[str, str] | None = None) -> SweepResult:
    """Measure ``entries`` (at most ``concurrency`` launches at once) and stage each new record; a
    given ``measurer`` runs ungated, and ``stage_unchanged`` stages every record (a shard).
    """
    gate = LaunchGate(max(1, concurrency))
    measurer = measurer or _gated_measurer(gate, isolation_mode)
    admitted = asyncio.Semaphore(entries_in_flight(gate.slots))
    iso = isolation.describe(isolation_mode)
    result = SweepResult({}, [], [])
    progress.start(len(entries))

    async def one(entry: Entry) -> None:
        async with admitted:
            progress.begin(entry.name)
            target = target_for(entry)
            try:
                rec = record.build(await measurer(target), iso, measured_at=_stamp(date))
            except schemas.SchemaViolation:
                raise  # an invalid record stops the sweep before anything is published (sweep_cmd)
            except Exception as exc:  # noqa: BLE001 - a harness bug is this server's recorded error, not the sweep's end
                rec = record.build(harness_bug.measurement(target, exc), iso, measured_at=_stamp(date))
            _stage(rec, root, staging, date, result, stage_unchanged, newest or {})
            progress.done(entry.name, rec["status"], _detail(rec))

    try:
        await asyncio.gather(*(one(e) for e in entries))
    finally:
        progress.close()
    return result


def _gated_measurer(gate: LaunchGate, isolation_mode: str):
    """``measure`` as a sweep runs it: no declared values, package resolved once, launches gated."""
    async def measurer(target):
        async with gate.slot():  # the install is bounded on its own, never inside a launch's budget
            installed = await install.install(target, isolation_mode, pass_declared_values=False)
        # measure's own default launcher, wrapped (a measure-side limiter hook would take ``gate``)
        launcher = gate.wrap(side_lists.with_side_lists(
            measuring._default_launcher(installed.target, False, isolation_mode, None)))
        return await measure(installed.target, isolation=isolation_mode, pass_declared_values=False, launcher=launcher,
                             installed=installed)

    return measurer


def stage_record(rec: Record, root: Path, staging: Staging, date: dt.date, result: SweepResult,
                 newest: dict[str, str] | None = None) -> None:
    """Stage ``rec`` unless the published record already says the same."""
    _stage(rec, root, staging, date, result, False, newest or {})


def _stage(rec: Record, root: Path, staging: Staging, date: dt.date, result: SweepResult, always: bool,
           newest: dict[str, str]) -> None:
    server = rec["server"]
    relative = published.record(server)
    current = None if always else _read(root / relative)
    published_day = max(_day(current), newest.get(server, ""))
    if current is not None and published_day > date.isoformat():  # never overwrite a newer measurement
        result.records[server] = current
        result.backfill[server] = rec
        result.unchanged.append(server)
        return
    if current is not None and kept_over_environment(current, rec):
        result.records[server] = current
        result.environment[server] = rec
        result.unchanged.append(server)
        return
    chosen = rec if current is None else settle(current, rec)
    if chosen is current:
        result.records[server] = current
        result.unchanged.append(server)
        return
    staged = staging.write_text(relative, record.serialize(chosen))
    schemas.check("measurement", parse(staged.read_text(encoding="utf-8")), where=str(staged))
    result.records[server] = chosen
    result.staged.append(relative)


_PLACEHOLDERS = (NOT_MEASURED_HERE, NOT_YET_RUN)


def kept_over_environment(current: Record, fresh: Record) -> bool:
    """Whether published ``current`` stays over a ``not-measured-here`` ``fresh``: it says something
    about the server that ``fresh`` does not show to be the machine's.
    """
    if fresh.get("status") != NOT_MEASURED_HERE or current.get("status") in _PLACEHOLDERS:
        return False
    if failure_reason.is_environment(current):  # a record from before the status: the machine's too
        return False
    said, now = _first_note(current), _first_note(fresh)
    return current.get("status") in NUMBERED or not (said and said in now)


def _first_note(rec: Record) -> str:
    notes = rec.get("notes") or []
    return next((n for n in notes if isinstance(n, str) and n.strip()), "")


def settle(current: Record, fresh: Record) -> Record:
    """The record to publish: ``current`` itself when ``fresh`` asserts nothing new, ``fresh`` with
    ``current``'s ``measuredAt`` when it only confirms it, else ``fresh``.
    """
    old, new = record.assertion(current), record.assertion(fresh)
    if old == new:
        return current
    old.pop("confirmed", None)
    new.pop("confirmed", None)
    if old != new:
        return fresh
    if current.get("confirmed") is True or not fresh.get("confirmed"):
        return current  # a single launch that found the same capture confirms nothing new
    return {**fresh, "measuredAt": current["measuredAt"]}


def same_result(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True when two records assert the same (``probe.record.assertion``)."""
    return record.assertion(a) == record.assertion(b)


def _stamp(date: dt.date) -> dt.datetime:
    """measuredAt: now, or noon UTC for a sweep dated another day."""
    now = dt.datetime.now(dt.timezone.utc)
    return now if now.date() == date else dt.datetime(date.year, date.month, date.day, 12, tzinfo=dt.timezone.utc)


def _read(path: Path) -> Record | None:
    try:
        value = parse(confine.read_bytes(confine.database_root(path), path).decode("utf-8"))
    except (OSError, ValueError):  # WireJSONError, UnicodeDecodeError and TooLarge are ValueErrors
        return None
    return cast(Record, value) if isinstance(value, dict) else None  # published: schema-checked when staged


def _detail(rec: Record) -> str:
    if rec["totalTokens"] is not None:
        assert rec["toolCount"] is not None, "a record with a total has a tool count"
        count = int(rec["toolCount"])
        return f"{int(rec['totalTokens']):,} tokens, {count} tool{'s' if count != 1 else ''}"
    return ("(environment) " if failure_reason.is_environment(rec) else "") + failure_reason.reason(rec)  # whole, never cut
