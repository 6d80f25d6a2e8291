"""Measure a set of catalog entries concurrently into a staging area (issue #4, "Sweep").

Each entry yields exactly one record, whatever the server does. Whether it replaces the published
record (issue #10, "Records that churn"):

* a record is rewritten only when what it asserts changed — status, capture, evidence, launch,
  isolation mode (``harness.probe.record.assertion``). Otherwise the published record stays byte
  for byte, so its ``measuredAt`` is when its capture (or failure evidence) was first taken, and
  this sweep's confirmation is its ``history.csv`` row;
* the same capture gaining a confirmation (published unconfirmed, now confirmed by a second
  launch) is rewritten with ``confirmed: true`` and the original ``measuredAt``;
* a sweep dated before what is already published for a server — its record's day or its newest
  ``history.csv`` row — never replaces the record: it only adds its history row (``backfill``);
* a ``not-measured-here`` record (the measuring machine failed, not the server) never replaces a
  server's published record: it only adds its history row (``environment``). Where the server has
  no published record, or only a ``not-yet-run`` or ``not-measured-here`` one, it is published.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.jsparse import parse
from harness.db import reason, record_file
from harness.db.catalog import Entry
from harness.db.launch_gate import LaunchGate, default_slots, entries_in_flight
from harness.db.progress import Progress
from harness.db.staging import Staging
from harness.db.targets import target_for
from harness.probe import install, internal, isolation, record, side_lists
from harness.probe import measure as measuring
from harness.probe.measure import measure
from harness.util import schemas



def default_concurrency() -> int:
    """Launches at once (``harness.db.launch_gate``): most time is spent waiting on installs and
    child processes, so a few per core (4 per core, 2 to 16)."""
    return default_slots()


@dataclass
class SweepResult:
    """``records``: server → the record of this sweep (staged or unchanged); ``staged``:
    repository paths staged for publishing; ``unchanged``: servers whose record was kept as is;
    ``backfill``: server → this sweep's record where a newer one is already published (a
    ``--date`` in the past): the newer record stays, the old day only gains its history row.
    ``environment``: server → this sweep's ``not-measured-here`` record where the published record
    stays (the machine failed, not the server); the day gains its history row."""

    records: dict[str, dict]
    staged: list[str]
    unchanged: list[str]
    backfill: dict[str, dict] = field(default_factory=dict)
    environment: dict[str, dict] = field(default_factory=dict)

    def history_records(self) -> dict[str, dict]:
        """The record each server's history row for this sweep's date is made from. A record kept
        over this sweep's ``not-measured-here`` that was itself measured on that date keeps the
        day's row: a day's row says what the record of that day says."""
        environment = {server: rec for server, rec in self.environment.items()
                       if _day(self.records.get(server)) != _day(rec)}
        return {**self.records, **self.backfill, **environment}


def _day(record: dict | None) -> str:
    return str((record or {}).get("measuredAt", ""))[:10]


async def sweep(entries: list[Entry], root: Path, staging: Staging, date: dt.date, *, concurrency: int,
                progress: Progress, isolation_mode: str = "host", measurer=None,
                stage_unchanged: bool = False, newest: dict[str, str] | None = None) -> SweepResult:
    """Measure ``entries`` with at most ``concurrency`` launches (and package resolutions) at once
    (``launch_gate``); stage each new record.

    ``measurer(target) -> Measurement`` defaults to ``harness.probe.measure.measure``, each
    ``npx``/``uvx`` package installed once first, in a slot of its own (``harness.probe.install``). A given
    ``measurer`` is used as it is: ungated, unresolved.
    ``stage_unchanged``: stage every record even when the working tree already has the same result
    (a shard directory must hold all of its records). ``newest``: server → newest history date.
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
                rec = record.build(internal.measurement(target, exc), iso, measured_at=_stamp(date))
            _stage(rec, root, staging, date, result, stage_unchanged, newest or {})
            progress.done(entry.name, rec["status"], _detail(rec))

    try:
        await asyncio.gather(*(one(e) for e in entries))
    finally:
        progress.close()
    return result


def _gated_measurer(gate: LaunchGate, isolation_mode: str):
    """``measure`` as a sweep runs it: no declared value reaches a catalog server, the package is
    resolved once (in a slot of its own), and every launch takes a slot of ``gate``."""
    async def measurer(target):
        async with gate.slot():  # the install is bounded on its own, never inside a launch's budget
            installed = await install.install(target, isolation_mode, pass_declared_values=False)
        # measure's own default launcher, wrapped (a measure-side limiter hook would take ``gate``)
        launcher = gate.wrap(side_lists.with_side_lists(
            measuring._default_launcher(installed.target, False, isolation_mode, None)))
        return await measure(installed.target, isolation=isolation_mode, pass_declared_values=False, launcher=launcher,
                             installed=installed)

    return measurer


def stage_record(rec: dict, root: Path, staging: Staging, date: dt.date, result: SweepResult,
                 newest: dict[str, str] | None = None) -> None:
    """Stage ``rec`` unless the published record already says the same (see module doc)."""
    _stage(rec, root, staging, date, result, False, newest or {})


def _stage(rec: dict, root: Path, staging: Staging, date: dt.date, result: SweepResult, always: bool,
           newest: dict[str, str]) -> None:
    server = rec["server"]
    relative = f"results/{server}/measurement.json"
    current = None if always else _read(root / relative)
    published_day = max(str((current or {}).get("measuredAt", ""))[:10], newest.get(server, ""))
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


ENVIRONMENT_STATUS = "not-measured-here"
_PLACEHOLDERS = (ENVIRONMENT_STATUS, "not-yet-run")


def kept_over_environment(current: dict, fresh: dict) -> bool:
    """Whether the published ``current`` stays because ``fresh`` failed for the machine's reasons
    (``not-measured-here``) and ``current`` says something about the server itself: not a
    placeholder, not an environment failure of its own, and not the very failure ``fresh`` now
    shows to be the machine's (its first note quoted inside ``fresh``'s: a remote host published
    ``unreachable`` on a machine that resolves no name at all)."""
    if fresh.get("status") != ENVIRONMENT_STATUS or current.get("status") in _PLACEHOLDERS:
        return False
    if reason.is_environment(current):  # a record from before the status: the machine's too
        return False
    said, now = _first_note(current), _first_note(fresh)
    return current.get("status") in reason.MEASURED or not (said and said in now)


def _first_note(rec: dict) -> str:
    notes = rec.get("notes") or []
    return next((n for n in notes if isinstance(n, str) and n.strip()), "")


def settle(current: dict, fresh: dict) -> dict:
    """The record to publish, given the published ``current`` and this sweep's ``fresh`` one:
    ``current`` itself (the same object) when ``fresh`` asserts nothing new; ``fresh`` with
    ``current``'s ``measuredAt`` when the only news is a confirmation of the same capture; else
    ``fresh``."""
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


def same_result(a: dict, b: dict) -> bool:
    """True when two records assert the same (``harness.probe.record.assertion``): they differ
    only in when and how the capture was taken."""
    return record.assertion(a) == record.assertion(b)


def _stamp(date: dt.date) -> dt.datetime:
    """measuredAt: now, unless the sweep is for another day (a --date override): then noon UTC."""
    now = dt.datetime.now(dt.timezone.utc)
    return now if now.date() == date else dt.datetime(date.year, date.month, date.day, 12, tzinfo=dt.timezone.utc)


def _read(path: Path) -> dict | None:
    try:
        value = parse(record_file.read_bytes(record_file.database_root(path), path).decode("utf-8"))
    except (OSError, ValueError):  # WireJSONError, UnicodeDecodeError and TooLarge are ValueErrors
        return None
    return value if isinstance(value, dict) else None


def _detail(rec: dict) -> str:
    if rec["totalTokens"] is not None:
        count = int(rec["toolCount"])
        return f"{int(rec['totalTokens']):,} tokens, {count} tool{'s' if count != 1 else ''}"
    return ("(environment) " if reason.is_environment(rec) else "") + reason.reason(rec)  # whole: issue #15
