"""``mcp-context-cost sweep [--shard K/N --out DIR | --merge DIR ...] [--commit]``: measure today's
slice, validate, run the harness-fault guard, publish, commit (docs/OPERATIONS.md, 'Setting up and
sweeping'). Exit 0 published, 1 harness fault or invalid record, 2 bad input or refused.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
from pathlib import Path

from harness.core.record import ISOLATION_MODES
from harness.db import confine, guard, journal, publish, rotation, shards, sweep_summary
from harness.db.catalog import CatalogError, load_catalog
from harness.db.commit import NotARepository, head_record, repo_at
from harness.db.lock import LockHeld
from harness.db.progress import Progress
from harness.db.history import HistoryError
from harness.db.sweep import SweepResult, default_concurrency, stage_record, sweep
from harness.pages.badge import stage_badges
from harness.pages.published_records import RecordError
from harness.pages.regen import regen_after_publish
from harness.probe import isolation
from harness.util import published, untrusted
from harness.util.cliargs import iso_date, positive_int, unknown_names
from harness.util.schemas import SchemaViolation

# What a publish asks of the pages (they sit above db, so they are handed down).
PAGES = publish.PageSteps(stage_badges, regen_after_publish, (CatalogError, RecordError, HistoryError))


def register(sub) -> None:
    p = sub.add_parser("sweep", help="measure a rotation slice, check it, publish it into the working tree "
                                     "(commits only with --commit)",
                       description="Measure this week's rotation slice of the catalog (or --only/--all), validate "
                                   "every record, run the harness-fault guard against HEAD, then write records, "
                                   "badges, history.csv and the regenerated pages into the working tree. Nothing "
                                   "is committed unless --commit is given; the summary's last line says what was "
                                   "written and how to commit or discard it. Exit codes: 0 published (or nothing "
                                   "to publish); 1 a record failed validation or the guard found a harness fault "
                                   "(nothing published); 2 bad input, a refused precondition (with --commit: "
                                   "uncommitted changes in the published paths; always: a symbolic link or a "
                                   "misshapen entry where the database is written), or another publish holding "
                                   "the repository's lock (see --wait).")
    p.add_argument("--date", type=iso_date,
                   help="sweep date YYYY-MM-DD (default: today, UTC; at most tomorrow); picks the week's slice and "
                        "the history rows' date; records of another day are stamped at noon UTC of that date, and a "
                        "newer published record is never replaced by an older day's")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--only", help="comma-separated entry names instead of the slice")
    which.add_argument("--all", action="store_true", help="every catalog entry instead of the slice")
    p.add_argument("--concurrency", type=positive_int, default=default_concurrency(),
                   help="launches (and package resolutions) at once (default: 4 per CPU core, 2 to 16; here %(default)s)")
    p.add_argument("--commit", action="store_true",
                   help="commit exactly the files this run published, as mcp-context-cost-bot; refused, before "
                        "anything is measured, while published paths hold uncommitted changes; without it they are "
                        "written but nothing is committed")
    p.add_argument("--root", default=".", help="repository root (default: .)")
    p.add_argument("--catalog", default=published.CATALOG, help="catalog path relative to --root")
    p.add_argument("--shard", help="K/N: measure only the K-th of N parts into --out (no publishing)")
    p.add_argument("--out", help="output directory of a --shard run (refused inside the published folders)")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="publish shard directories together")
    p.add_argument("--isolation", default="auto", choices=("auto", *ISOLATION_MODES),
                   help="auto (default) = sandbox where bubblewrap works, else host")
    p.add_argument("--wait", action="store_true",
                   help="when another publish holds the repository's lock, wait for it instead of exiting 2")
    p.set_defaults(func=run)


def run(args, measurer=None) -> int:
    root = Path(args.root).resolve()
    date = args.date or dt.datetime.now(dt.timezone.utc).date()
    if (future := _future(date, "--date")) is not None:
        print(future, file=sys.stderr)
        return 2
    if getattr(args, "shard", None):
        return _shard(root, date, args, measurer)
    if not getattr(args, "merge", None):
        try:  # bad input is found before the lock is taken or anything is written
            entries = _choose(load_catalog(root / args.catalog), args, date)
            isolation.resolve_mode(getattr(args, "isolation", "auto"))  # an unavailable one is bad input
        except (CatalogError, LookupError, isolation.Unavailable) as exc:
            print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
            return 2
    try:
        with publish.session(root, PAGES, commit=args.commit, wait=getattr(args, "wait", False), say=_say) as run_:
            if getattr(args, "merge", None):
                return _merge(root, args, run_)
            print(f"sweep {date.isoformat()} (week {rotation.week_label(date)}): {len(entries)} server(s), "
                  f"concurrency {args.concurrency}", file=sys.stderr)
            stage = journal.Staging(root, f"{date.isoformat()}-{os.getpid()}")
            try:
                return _measure_check_publish(root, entries, stage, date, args, measurer, run_)
            finally:
                if not stage.has_journal():  # a journaled publish is finished by whoever runs next
                    stage.discard()
    except (NotARepository, LockHeld, publish.Refused) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return getattr(exc, "code", 2)
    except OSError as exc:
        print(untrusted.lines(f"error: {exc}") + "\nthe next sweep finishes an interrupted publish from its journal",
              file=sys.stderr)
        return 1


def _future(date: dt.date, what: str) -> str | None:
    """The error for a date after tomorrow (UTC): a future record would never be replaced."""
    latest = dt.datetime.now(dt.timezone.utc).date() + dt.timedelta(days=1)
    if date <= latest:
        return None
    return (f"error: {what} {date.isoformat()} is after {latest.isoformat()} (tomorrow, UTC): its records would "
            "outrank every real sweep until that day; nothing was measured")


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _choose(catalog, args, date: dt.date):
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {e.name: e for e in catalog.entries}
        missing = unknown_names(wanted, known, "--only names not in the catalog")
        if missing:
            raise LookupError(missing)
        return [known[n] for n in wanted]
    return list(catalog.entries) if args.all else rotation.slice_for(catalog, date)


def _measure(root, entries, stage, date, args, measurer, stage_unchanged=False, newest=None) -> SweepResult:
    mode = isolation.resolve_mode(getattr(args, "isolation", "auto"))
    return asyncio.run(sweep(entries, root, stage, date, concurrency=max(1, args.concurrency), progress=Progress(),
                             isolation_mode=mode, measurer=measurer, stage_unchanged=stage_unchanged,
                             newest=newest))


def _shard(root: Path, date: dt.date, args, measurer) -> int:
    try:
        catalog = load_catalog(root / args.catalog)
        entries = _choose(catalog, args, date)
        isolation.resolve_mode(getattr(args, "isolation", "auto"))  # an unavailable one is bad input, checked first
        k, n = shards.parse_spec(args.shard)
        if not args.out:
            raise LookupError("--shard needs --out DIR")
        _refuse_published_out(Path(args.out), root, shards.part(entries, k, n))
    except (CatalogError, LookupError, shards.ShardError, isolation.Unavailable) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    entries = shards.part(entries, k, n)
    out = Path(args.out).resolve()
    print(f"shard {k}/{n}: {len(entries)} server(s) into {out}", file=sys.stderr)
    try:
        result = _measure(root, entries, journal.Staging(root, "", directory=out), date, args, measurer, True)
    except SchemaViolation as exc:
        print("error: a record failed validation:\n" + untrusted.lines(exc), file=sys.stderr)
        return 1
    shards.write_manifest(out, date.isoformat(), k, n, list(result.records))
    sweep_summary.show(result, date, last=f"shard {k}/{n}: wrote {len(result.records)} record(s) to {out}; nothing "
                                          "published or committed until: mcp-context-cost sweep --merge DIR...")
    return 0


def _refuse_published_out(out: Path, root: Path, entries) -> None:
    """ShardError when a shard's records would land (links followed) in a published path."""
    if out.resolve().is_relative_to((root / journal.STAGING_DIR).resolve()):
        raise shards.ShardError(f"--out {out}: inside {journal.STAGING_DIR}/, which every publish empties of "
                                "folders without a journal")
    for folder in [out / published.RESULTS, *(out / published.RESULTS / e.name for e in entries)]:
        owner = confine.published_owner(folder, [root])
        if owner is not None:
            raise shards.ShardError(f"--out {out}: {folder} is inside the database's published {owner}; a shard "
                                    "writes its own folder, published only by sweep --merge")


def _merge(root: Path, args, run_) -> int:
    try:
        day, records = shards.read_shards([Path(d) for d in args.merge])
        problems = shards.check_catalog(records, load_catalog(root / args.catalog))
        if problems:
            raise shards.ShardError("\n".join(problems))
    except (shards.ShardError, CatalogError) as exc:  # shard files are untrusted input: one escaped line each
        print(untrusted.lines(f"error: {exc}") + "\nnothing published", file=sys.stderr)
        return 2
    except SchemaViolation as exc:
        print(untrusted.lines(f"error: {exc}") + "\nnothing published", file=sys.stderr)
        return 1
    date = dt.date.fromisoformat(day)
    if (future := _future(date, "the shards' date")) is not None:
        print(future.replace("nothing was measured", "nothing published"), file=sys.stderr)
        return 2
    stage = journal.Staging(root, f"merge-{date.isoformat()}-{os.getpid()}")
    result = SweepResult({}, [], [])
    newest = publish.newest_dates(root)
    try:
        for _, rec in sorted(records.items()):
            stage_record(rec, root, stage, date, result, newest)
        return _check_publish(root, result, stage, date, args, run_)
    finally:
        if not stage.has_journal():
            stage.discard()


def _measure_check_publish(root, entries, stage, date, args, measurer, run_) -> int:
    try:
        result = _measure(root, entries, stage, date, args, measurer, newest=publish.newest_dates(root))
    except SchemaViolation as exc:
        print("error: a record failed validation; nothing published:\n" + untrusted.lines(exc), file=sys.stderr)
        return 1
    return _check_publish(root, result, stage, date, args, run_)


def _check_publish(root: Path, result: SweepResult, stage: journal.Staging, date: dt.date, args,
                   run_: publish.Session) -> int:
    repo = repo_at(root)
    fresh = result.history_records()  # the guard judges every row it would publish
    verdict = guard.check({s: head_record(repo, s) for s in fresh}, fresh)
    print(verdict.reason, file=sys.stderr)
    if verdict.fault:
        sweep_summary.show(result, date, last="nothing was published: results, badges and history are as committed",
                           stream=sys.stderr)  # a diagnosis: stdout stays for what was published
        return 1
    message = publish.commit_message(result.records, repo, date, verdict.reason) if args.commit else None
    try:
        outcome = run_.publish(stage, result.records, fresh, result.staged, date, message)
    except SchemaViolation as exc:
        print("error: a badge or history row failed validation; nothing published:\n" + untrusted.lines(exc),
              file=sys.stderr)
        return 1
    for problem in outcome.problems:
        print(untrusted.line(f"problem: {problem}"), file=sys.stderr)
    sweep_summary.show(result, date, root=root, written=outcome.files, commit=args.commit, sha=outcome.commit)
    return 0
