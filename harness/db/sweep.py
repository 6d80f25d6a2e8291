"""Measure a set of catalog entries concurrently into a staging area (issue #4, "Sweep").

Each entry yields exactly one record, whatever the server does. A record whose result is the
same as the one already in the working tree for the same UTC day is not restaged, so a rerun on
the same day changes nothing.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.jsparse import WireJSONError, parse
from harness.db import reason
from harness.db.catalog import Entry
from harness.db.progress import Progress
from harness.db.staging import Staging
from harness.db.targets import target_for
from harness.probe import internal, isolation, record
from harness.probe.measure import measure
from harness.util import schemas

VOLATILE = ("measuredAt", "attempts", "deadlineMs")


def default_concurrency() -> int:
    """Servers measured at once: most time is spent waiting on installs and child processes, so
    a few per core (4 per core, at most 16)."""
    return max(2, min(16, 4 * (os.cpu_count() or 1)))


@dataclass
class SweepResult:
    """``records``: server → the record of this sweep (staged or unchanged); ``staged``:
    repository paths staged for publishing; ``unchanged``: servers whose record was kept as is;
    ``backfill``: server → this sweep's record where a newer one is already published (a
    ``--date`` in the past): the newer record stays, the old day only gains its history row."""

    records: dict[str, dict]
    staged: list[str]
    unchanged: list[str]
    backfill: dict[str, dict] = field(default_factory=dict)

    def history_records(self) -> dict[str, dict]:
        """The record each server's history row for this sweep's date is made from."""
        return {**self.records, **self.backfill}


async def sweep(entries: list[Entry], root: Path, staging: Staging, date: dt.date, *, concurrency: int,
                progress: Progress, isolation_mode: str = "host", measurer=None,
                stage_unchanged: bool = False) -> SweepResult:
    """Measure ``entries`` with at most ``concurrency`` in flight; stage each new record.

    ``measurer(target) -> Measurement`` defaults to ``harness.probe.measure.measure``.
    ``stage_unchanged``: stage every record even when the working tree already has the same result
    (a shard directory must hold all of its records).
    """
    measurer = measurer or functools.partial(measure, isolation=isolation_mode, pass_declared_values=False)
    gate = asyncio.Semaphore(concurrency)
    iso = isolation.describe(isolation_mode)
    result = SweepResult({}, [], [])
    progress.start(len(entries))

    async def one(entry: Entry) -> None:
        async with gate:
            progress.begin(entry.name)
            target = target_for(entry)
            try:
                rec = record.build(await measurer(target), iso, measured_at=_stamp(date))
            except schemas.SchemaViolation:
                raise  # an invalid record stops the sweep before anything is published (sweep_cmd)
            except Exception as exc:  # noqa: BLE001 - a harness bug is this server's recorded error, not the sweep's end
                rec = record.build(internal.measurement(target, exc), iso, measured_at=_stamp(date))
            _stage(rec, root, staging, date, result, stage_unchanged)
            progress.done(entry.name, rec["status"], _detail(rec))

    try:
        await asyncio.gather(*(one(e) for e in entries))
    finally:
        progress.close()
    return result


def stage_record(rec: dict, root: Path, staging: Staging, date: dt.date, result: SweepResult) -> None:
    """Stage ``rec`` unless the working tree already holds the same result from the same day."""
    _stage(rec, root, staging, date, result)


def _stage(rec: dict, root: Path, staging: Staging, date: dt.date, result: SweepResult, always: bool = False) -> None:
    relative = f"results/{rec['server']}/measurement.json"
    current = None if always else _read(root / relative)
    current_day = (current or {}).get("measuredAt", "")[:10]
    if current is not None and current_day > date.isoformat():  # never overwrite a newer measurement
        result.records[rec["server"]] = current
        result.backfill[rec["server"]] = rec
        result.unchanged.append(rec["server"])
        return
    if current is not None and same_result(current, rec) and current_day == date.isoformat():
        result.records[rec["server"]] = current
        result.unchanged.append(rec["server"])
        return
    staged = staging.write_text(relative, record.serialize(rec))
    schemas.check("measurement", parse(staged.read_text(encoding="utf-8")), where=str(staged))
    result.records[rec["server"]] = rec
    result.staged.append(relative)


def same_result(a: dict, b: dict) -> bool:
    """True when two records differ only in when and how long (``measuredAt``, attempts)."""
    strip = lambda r: {k: v for k, v in r.items() if k not in VOLATILE}  # noqa: E731
    return strip(a) == strip(b)


def _stamp(date: dt.date) -> dt.datetime:
    """measuredAt: now, unless the sweep is for another day (a --date override): then noon UTC."""
    now = dt.datetime.now(dt.timezone.utc)
    return now if now.date() == date else dt.datetime(date.year, date.month, date.day, 12, tzinfo=dt.timezone.utc)


def _read(path: Path) -> dict | None:
    try:
        value = parse(path.read_text(encoding="utf-8"))
    except (OSError, WireJSONError):
        return None
    return value if isinstance(value, dict) else None


def _detail(rec: dict) -> str:
    if rec["totalTokens"] is not None:
        count = int(rec["toolCount"])
        return f"{int(rec['totalTokens']):,} tokens, {count} tool{'s' if count != 1 else ''}"
    return ("(environment) " if reason.is_environment(rec) else "") + reason.reason(rec)  # whole: issue #15
