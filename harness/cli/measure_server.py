"""``measure --server NAME``: one catalog entry measured by the sweep's code and published through
``db.publish`` (lock, journal, history row, pages), never committed; the harness-fault guard is
not run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
import os
import sys
from pathlib import Path

from harness.cli.measure_cmd import report_changed, require_program, summary
from harness.cli.sweep_cmd import PAGES
from harness.core.tokenizer import TokenizerUnavailable
from harness.db import publish
from harness.db.catalog import CatalogError, load_catalog
from harness.db.lock import LockHeld
from harness.db.progress import Progress
from harness.db.sweep import sweep
from harness.db.targets import target_for
from harness.probe import isolation, record
from harness.probe.measure import measure
from harness.util import published, untrusted
from harness.util.cliargs import did_you_mean
from harness.util.schemas import SchemaViolation

# measure_cmd's options that describe an ad-hoc launch; a catalog entry declares its own.
AD_HOC_OPTIONS = ("name", "env", "header", "needs_git", "out", "results", "badges")


def measure_entry(args) -> int:
    """Run ``measure --server``; returns the exit code."""
    catalog_path = Path(args.catalog).resolve()
    root = catalog_path.parent
    try:  # bad input is found before the lock is taken or anything is written
        entry = _entry(catalog_path, args)
        _refuse_ad_hoc_options(args, root)
    except (CatalogError, LookupError, ValueError) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    try:
        with publish.session(root, PAGES, commit=False, wait=args.wait, say=_say) as run_:
            rec, kept = _measure_and_publish(root, entry, args, run_)
    except (LockHeld, publish.Refused, TokenizerUnavailable) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return getattr(exc, "code", 2)
    except SchemaViolation as exc:
        print("error: the record failed validation; nothing published:\n" + untrusted.lines(exc), file=sys.stderr)
        return 1
    if kept:
        print(f"note: the published record already says this (captured {rec['measuredAt']}); it is kept as it is, "
              "and today's confirmation is its history.csv row", file=sys.stderr)
    print(summary(rec, root / published.record(entry.name), root / published.badge(entry.name)))
    if getattr(args, "changed", False) or getattr(args, "index", None):
        report_changed(args, rec)
    return 0 if rec["status"] in record.MEASURED_STATUSES else 3


def _refuse_ad_hoc_options(args, root: Path) -> None:
    """ValueError for ad-hoc options (``--results``/``--badges`` naming the database's own are fine)."""
    given = [o for o in AD_HOC_OPTIONS if getattr(args, o, None) not in (None, False, [])]
    given = [o for o in given if not (o in (published.RESULTS, published.BADGES) and Path(getattr(args, o)).resolve() == root / o)]
    if given:
        flags = ", ".join(f"--{o.replace('_', '-')}" for o in given)
        raise ValueError(f"{flags} {'applies' if len(given) == 1 else 'apply'} to --command/--url only; --server "
                         "measures the entry as the catalog declares it and publishes into the repository holding "
                         "--catalog")


def _entry(catalog_path: Path, args):
    """The catalog entry with ``--timeout`` applied and its program checked; CatalogError,
    LookupError, ValueError.
    """
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
    stage = publish.Staging(root, f"measure-{date.isoformat()}-{os.getpid()}")
    try:
        result = asyncio.run(sweep([entry], root, stage, date, concurrency=1, progress=Progress(), isolation_mode=mode,
                                   measurer=measurer, newest=publish.newest_dates(root)))
        outcome = run_.publish(stage, result.records, result.history_records(), result.staged, date, None)
    finally:
        if not stage.has_journal():
            stage.discard()
    for problem in outcome.problems:
        print(untrusted.line(f"problem: {problem}"), file=sys.stderr)
    return result.records[entry.name], entry.name in result.unchanged


def _say(line: str) -> None:
    print(line, file=sys.stderr)
