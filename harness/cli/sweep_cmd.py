"""``mcp-context-cost sweep``: the main job — measure today's slice, check, publish, commit.

    mcp-context-cost sweep [--date D] [--only a,b] [--all] [--concurrency N] [--commit] [--root DIR]
    mcp-context-cost sweep --shard K/N --out DIR [...]      # measure one part, publish nothing
    mcp-context-cost sweep --merge DIR [DIR ...] [--commit]  # validate, guard, publish the parts

Order (issue #4): recover anything an interrupted sweep left; load the catalog (a bad catalog
measures nothing); measure into the staging area; validate; run the harness-fault guard against
HEAD; only then publish (badges, history, records, regenerated pages) and, with ``--commit``, make
one commit. Exit codes: 0 published (or nothing to publish), 1 harness fault (nothing published),
2 bad input.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
from pathlib import Path

from harness.cli import sweep_summary
from harness.db import guard, recording, rotation, shards, staging
from harness.db.catalog import CatalogError, load_catalog
from harness.db.commit import NotARepository, commit_published, require_repo
from harness.db.committed import head_record, repo_at
from harness.db.progress import Progress
from harness.db.sweep import SweepResult, default_concurrency, stage_record, sweep
from harness.probe import isolation
from harness.publish.badge import stage_badges
from harness.publish.regen import regen
from harness.util.cliargs import iso_date, positive_int, unknown_names
from harness.util.schemas import SchemaViolation
from harness.util import untrusted


def register(sub) -> None:
    p = sub.add_parser("sweep", help="measure a rotation slice, check it, publish it into the working tree "
                                     "(commits only with --commit)",
                       description="Measure this week's rotation slice of the catalog (or --only/--all), validate "
                                   "every record, run the harness-fault guard against HEAD, then write records, "
                                   "badges, history.csv and the regenerated pages into the working tree. Nothing "
                                   "is committed unless --commit is given; the summary's last line says what was "
                                   "written and how to commit or discard it. Exit codes: 0 published (or nothing "
                                   "to publish); 1 a record failed validation or the guard found a harness fault "
                                   "(nothing published); 2 bad input.")
    p.add_argument("--date", type=iso_date,
                   help="sweep date YYYY-MM-DD (default: today, UTC); picks the week's slice and the history "
                        "rows' date; records of another day are stamped at noon UTC of that date, and a newer "
                        "published record is never replaced by an older day's")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--only", help="comma-separated entry names instead of the slice")
    which.add_argument("--all", action="store_true", help="every catalog entry instead of the slice")
    p.add_argument("--concurrency", type=positive_int, default=default_concurrency(),
                   help="servers measured at once (default: 4 per CPU core, 2 to 16; here %(default)s)")
    p.add_argument("--commit", action="store_true",
                   help="commit the published files as mcp-context-cost-bot; without it they are written but "
                        "nothing is committed")
    p.add_argument("--root", default=".", help="repository root (default: .)")
    p.add_argument("--catalog", default="servers.yaml", help="catalog path relative to --root")
    p.add_argument("--shard", help="K/N: measure only the K-th of N parts into --out (no publishing)")
    p.add_argument("--out", help="output directory of a --shard run")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="publish shard directories together")
    p.add_argument("--isolation", default="auto", choices=("auto", "host", "sandbox", "docker"),
                   help="auto (default) = sandbox where bubblewrap works, else host")
    p.set_defaults(func=run)


def run(args, measurer=None) -> int:
    root = Path(args.root).resolve()
    date = args.date or dt.datetime.now(dt.timezone.utc).date()
    for line in staging.recover(root):
        print(line, file=sys.stderr)
    if args.commit and not getattr(args, "shard", None):
        try:
            require_repo(root)
        except NotARepository as exc:
            print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
            return 2
    if getattr(args, "merge", None):
        return _merge(root, args)
    try:
        catalog = load_catalog(root / args.catalog)
        entries = _choose(catalog, args, date)
        isolation.resolve_mode(getattr(args, "isolation", "auto"))  # an unavailable one is bad input, checked first
        if getattr(args, "shard", None):
            k, n = shards.parse_spec(args.shard)
            if not args.out:
                raise LookupError("--shard needs --out DIR")
            return _measure_shard(root, shards.part(entries, k, n), date, args, measurer, k, n)
    except (CatalogError, LookupError, shards.ShardError, isolation.Unavailable) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    print(f"sweep {date.isoformat()} (week {rotation.week_label(date)}): {len(entries)} server(s), "
          f"concurrency {args.concurrency}", file=sys.stderr)
    stage = staging.Staging(root, f"{date.isoformat()}-{os.getpid()}")
    try:
        return _measure_check_publish(root, entries, stage, date, args, measurer)
    finally:
        stage.discard()


def _choose(catalog, args, date: dt.date):
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {e.name: e for e in catalog.entries}
        missing = unknown_names(wanted, known, "--only names not in the catalog")
        if missing:
            raise LookupError(missing)
        return [known[n] for n in wanted]
    return list(catalog.entries) if args.all else rotation.slice_for(catalog, date)


def _measure(root, entries, stage, date, args, measurer, stage_unchanged=False):
    mode = isolation.resolve_mode(getattr(args, "isolation", "auto"))
    return asyncio.run(sweep(entries, root, stage, date, concurrency=max(1, args.concurrency), progress=Progress(),
                             isolation_mode=mode, measurer=measurer, stage_unchanged=stage_unchanged))


def _measure_shard(root, entries, date, args, measurer, k: int, n: int) -> int:
    out = Path(args.out).resolve()
    print(f"shard {k}/{n}: {len(entries)} server(s) into {out}", file=sys.stderr)
    try:
        result = _measure(root, entries, staging.Staging(root, "", directory=out), date, args, measurer, True)
    except SchemaViolation as exc:
        print("error: a record failed validation:\n" + untrusted.lines(exc), file=sys.stderr)
        return 1
    shards.write_manifest(out, date.isoformat(), k, n, list(result.records))
    sweep_summary.show(result, date, last=f"shard {k}/{n}: wrote {len(result.records)} record(s) to {out}; nothing "
                                          "published or committed until: mcp-context-cost sweep --merge DIR...")
    return 0


def _merge(root: Path, args) -> int:
    try:
        day, records = shards.read_shards([Path(d) for d in args.merge])
    except shards.ShardError as exc:
        print(untrusted.lines(f"error: {exc}") + "\nnothing published", file=sys.stderr)
        return 2
    except SchemaViolation as exc:
        print(untrusted.lines(f"error: {exc}") + "\nnothing published", file=sys.stderr)
        return 1
    date = dt.date.fromisoformat(day)
    stage = staging.Staging(root, f"merge-{date.isoformat()}-{os.getpid()}")
    result = SweepResult({}, [], [])
    try:
        for _, rec in sorted(records.items()):
            stage_record(rec, root, stage, date, result)
        return _check_publish(root, result, stage, date, args)
    finally:
        stage.discard()


def _measure_check_publish(root, entries, stage, date, args, measurer) -> int:
    try:
        result = _measure(root, entries, stage, date, args, measurer)
    except SchemaViolation as exc:
        print("error: a record failed validation; nothing published:\n" + untrusted.lines(exc), file=sys.stderr)
        return 1
    return _check_publish(root, result, stage, date, args)


def _check_publish(root, result, stage, date, args) -> int:
    repo = repo_at(root)
    verdict = guard.check({s: head_record(repo, s) for s in result.records}, result.records)
    print(verdict.reason, file=sys.stderr)
    if verdict.fault:
        sweep_summary.show(result, date, last="nothing was published: results, badges and history are as committed",
                           stream=sys.stderr)  # a diagnosis: stdout stays for what was published
        return 1
    return _publish(root, result, stage, date, args, repo, verdict.reason)


def _publish(root, result, stage, date, args, repo, guard_reason: str) -> int:
    staged = result.staged + stage_badges(result.records, root, stage)
    staged += recording.stage_history(result.history_records(), root, stage, date)
    stage.promote(staged)
    _regen(root)
    sha = None
    if args.commit:
        sha = commit_published(root, recording.commit_message(result.records, repo, date, guard_reason))
    sweep_summary.show(result, date, root=root, written=staged, commit=args.commit, sha=sha)
    return 0


def _regen(root: Path) -> None:
    """Regenerate leaderboard, pages and dashboard from the published records (issue #5)."""
    regen(root)
