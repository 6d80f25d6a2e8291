"""``mcp-context-cost sweep``: the main job — measure today's slice, check, publish, commit.

    mcp-context-cost sweep [--date D] [--only a,b] [--all] [--concurrency N] [--commit] [--root DIR]

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

from harness.db import guard, publish, rotation, staging
from harness.db.catalog import CatalogError, load_catalog
from harness.db.commit import commit_published
from harness.db.committed import head_record, repo_at
from harness.db.progress import Progress
from harness.db.sweep import default_concurrency, sweep
from harness.util.schemas import SchemaViolation


def register(sub) -> None:
    p = sub.add_parser("sweep", help="measure a rotation slice, check it, publish and commit")
    p.add_argument("--date", type=dt.date.fromisoformat, help="sweep date YYYY-MM-DD (default: today, UTC)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--only", help="comma-separated entry names instead of the slice")
    which.add_argument("--all", action="store_true", help="every catalog entry instead of the slice")
    p.add_argument("--concurrency", type=int, default=default_concurrency(), help="servers measured at once")
    p.add_argument("--commit", action="store_true", help="commit the published files (bot identity)")
    p.add_argument("--root", default=".", help="repository root (default: .)")
    p.add_argument("--catalog", default="servers.yaml", help="catalog path relative to --root")
    p.set_defaults(func=run)


def run(args, measurer=None) -> int:
    root = Path(args.root).resolve()
    date = args.date or dt.datetime.now(dt.timezone.utc).date()
    for line in staging.recover(root):
        print(line, file=sys.stderr)
    try:
        catalog = load_catalog(root / args.catalog)
        entries = _choose(catalog, args, date)
    except (CatalogError, LookupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
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
        missing = [n for n in wanted if n not in known]
        if missing:
            raise LookupError(f"--only names not in the catalog: {', '.join(missing)}")
        return [known[n] for n in wanted]
    return list(catalog.entries) if args.all else rotation.slice_for(catalog, date)


def _measure_check_publish(root, entries, stage, date, args, measurer) -> int:
    try:
        result = asyncio.run(sweep(entries, root, stage, date, concurrency=max(1, args.concurrency),
                                   progress=Progress(), measurer=measurer))
    except SchemaViolation as exc:
        print(f"error: a record failed validation; nothing published:\n{exc}", file=sys.stderr)
        return 1
    repo = repo_at(root)
    verdict = guard.check({s: head_record(repo, s) for s in result.records}, result.records)
    print(verdict.reason, file=sys.stderr)
    if verdict.fault:
        print("nothing was published: results, badges and history are as committed", file=sys.stderr)
        return 1
    return _publish(root, result, stage, date, args, repo, verdict.reason)


def _publish(root, result, stage, date, args, repo, guard_reason: str) -> int:
    staged = result.staged + publish.stage_badges(result.records, root, stage)
    staged += publish.stage_history(result.records, root, stage, date)
    stage.promote(staged)
    _regen(root)
    print(f"published {len(staged)} file(s); {len(result.unchanged)} record(s) unchanged", file=sys.stderr)
    if args.commit:
        sha = commit_published(root, publish.commit_message(result.records, repo, date, guard_reason))
        print(f"committed {sha[:12]}" if sha else "nothing changed: no commit", file=sys.stderr)
    _print_summary(result.records)
    return 0


def _regen(root: Path) -> None:
    """Regenerate leaderboard and pages when the publish layer is present (issue #5)."""
    try:
        from harness.publish.regen import regen
    except ImportError:
        return
    regen(root)


def _print_summary(records: dict[str, dict]) -> None:
    for server, rec in sorted(records.items()):
        number = f"{int(rec['totalTokens']):,} tokens" if rec["totalTokens"] is not None else ""
        print(f"{server:32} {rec['status']:18} {number}")
