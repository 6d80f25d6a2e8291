"""``mcp-context-cost measure --server NAME``: one catalog entry, measured and published the way a
sweep does it (issue #10, "one path for every published measurement").

The entry is measured by the sweep's own code (``harness.db.sweep``: declared env names get dummy
values, the resolved isolation, the rule that a record is rewritten only when what it asserts
changed) and published through ``harness.cli.publisher`` into the repository holding ``--catalog``:
under the publish lock, through the journal, with its ``history.csv`` row and the regenerated
pages. Nothing is committed — a later ``sweep --commit`` refuses while these changes are pending,
so a bot commit never carries them. ``--timeout`` and ``--single`` are honoured and the record says
so (``timeoutMs``, ``confirmed``); the ad-hoc options (``--name``, ``--env``, ``--out`` …) are refused.
The harness-fault guard is not run: it needs at least five servers to fire.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
import os
import sys
from pathlib import Path

from harness.cli import publisher
from harness.cli.measure_cmd import report_changed, require_program, summary
from harness.core.tokenizer import TokenizerUnavailable
from harness.db import recording
from harness.db.catalog import CatalogError, load_catalog
from harness.db.lock import LockHeld
from harness.db.progress import Progress
from harness.db.staging import Staging
from harness.db.sweep import sweep
from harness.db.targets import target_for
from harness.probe import isolation, build_record as record
from harness.probe.measure import measure
from harness.util import untrusted
from harness.util.cliargs import did_you_mean
from harness.util.schemas import SchemaViolation

# measure_cmd's options that describe an ad-hoc launch; a catalog entry declares its own.
AD_HOC_OPTIONS = ("name", "env", "header", "needs_git", "out", "results", "badges")


def measure_entry(args) -> int:
    """Run ``measure --server`` (see module doc); returns the exit code."""
    catalog_path = Path(args.catalog).resolve()
    root = catalog_path.parent
    try:  # bad input is found before the lock is taken or anything is written
        entry = _entry(catalog_path, args)
        _refuse_ad_hoc_options(args, root)
    except (CatalogError, LookupError, ValueError) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    try:
        with publisher.session(root, commit=False, wait=args.wait, say=_say) as run_:
            rec, kept = _measure_and_publish(root, entry, args, run_)
    except (LockHeld, publisher.Refused, TokenizerUnavailable) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return getattr(exc, "code", 2)
    except SchemaViolation as exc:
        print("error: the record failed validation; nothing published:\n" + untrusted.lines(exc), file=sys.stderr)
        return 1
    if kept:
        print(f"note: the published record already says this (captured {rec['measuredAt']}); it is kept as it is, "
              "and today's confirmation is its history.csv row", file=sys.stderr)
    print(summary(rec, root / "results" / entry.name / "measurement.json", root / "badges" / f"{entry.name}.json"))
    if getattr(args, "changed", False) or getattr(args, "index", None):
        report_changed(args, rec)
    return 0 if rec["status"] in record.MEASURED_STATUSES else 3


def _refuse_ad_hoc_options(args, root: Path) -> None:
    """Raise ``ValueError`` for options that describe an ad-hoc launch or output. ``--results`` and
    ``--badges`` naming the database's own folders are allowed: they say what ``--server`` does."""
    given = [o for o in AD_HOC_OPTIONS if getattr(args, o, None) not in (None, False, [])]
    given = [o for o in given if not (o in ("results", "badges") and Path(getattr(args, o)).resolve() == root / o)]
    if given:
        flags = ", ".join(f"--{o.replace('_', '-')}" for o in given)
        raise ValueError(f"{flags} {'applies' if len(given) == 1 else 'apply'} to --command/--url only; --server "
                         "measures the entry as the catalog declares it and publishes into the repository holding "
                         "--catalog")


def _entry(catalog_path: Path, args):
    """The catalog entry (``--timeout`` applied), its launcher checked before anything is launched.
    Raises ``CatalogError``, ``LookupError`` (no such entry) or ``ValueError`` (no such program)."""
    catalog = load_catalog(catalog_path)
    entry = catalog.get(args.server)
    if entry is None:
        hint = did_you_mean(args.server, (e.name for e in catalog.entries))
        raise LookupError(f"no entry named {args.server!r} in {args.catalog}{hint}")
    entry = dataclasses.replace(entry, timeout_seconds=args.timeout) if args.timeout else entry
    require_program(target_for(entry), isolation.resolve_mode(args.isolation), f"entry {args.server!r}")
    return entry


def _measure_and_publish(root: Path, entry, args, run_) -> tuple[dict, bool]:
    date = dt.datetime.now(dt.timezone.utc).date()
    mode = isolation.resolve_mode(args.isolation)
    measurer = functools.partial(measure, isolation=mode, pass_declared_values=False, dual=not args.single)
    stage = Staging(root, f"measure-{date.isoformat()}-{os.getpid()}")
    try:
        result = asyncio.run(sweep([entry], root, stage, date, concurrency=1, progress=Progress(), isolation_mode=mode,
                                   measurer=measurer, newest=recording.newest_dates(root)))
        outcome = run_.publish(stage, result.records, result.history_records(), result.staged, date, None)
    finally:
        if not stage.has_journal():
            stage.discard()
    for problem in outcome.problems:
        print(untrusted.line(f"problem: {problem}"), file=sys.stderr)
    return result.records[entry.name], entry.name in result.unchanged


def _say(line: str) -> None:
    print(line, file=sys.stderr)
