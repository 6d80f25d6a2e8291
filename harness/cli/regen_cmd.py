"""``mcp-context-cost regen [--root .] [--backfill]``: rewrite every generated page from the records,
the catalog and history.csv; ``--backfill`` first rebuilds the tool vectors from git. Exit 0
written, 2 an input cannot be used (nothing written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.db.catalog import CatalogError, load_catalog
from harness.db.history import HistoryError
from harness.pages.backfill import BackfillError, backfill
from harness.pages.published_records import RecordError
from harness.pages.regen import regen
from harness.util import published, untrusted


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "regen", help="regenerate the leaderboard, server pages and dashboard from what is on disk (never commits)",
        description="Rewrite results/leaderboard.md and .csv, docs/servers/*.md and .html, the trend pictures, "
                    "docs/index.html, results/regressions.md and .json, results/capture-index.json, "
                    "results/tool-shape.json and each entry's results/<name>/tool-vectors.json from "
                    "servers.yaml, results/*/measurement.json and history.csv. Commits nothing. Exit codes: "
                    "0 written; 2 an input cannot be used (nothing written).")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="repository root holding servers.yaml, results/ and history.csv (default: .)")
    parser.add_argument("--backfill", action="store_true",
                        help="first rebuild every entry's tool vectors from the git history of its "
                             "measurement.json (needs the full history, not a shallow clone)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        filled = None
        if getattr(args, "backfill", False):
            names = [e.name for e in load_catalog(Path(args.root) / published.CATALOG).entries]
            filled = backfill(args.root, names)
        paths = regen(args.root, filled.vectors if filled else None)
    except (CatalogError, RecordError, HistoryError, BackfillError) as exc:
        print("regen: nothing written:\n" + untrusted.lines(exc), file=sys.stderr)
        return 2
    if filled is not None:
        print(f"regen: backfilled tool vectors from {filled.commits} commit(s), {filled.versions} record "
              f"version(s); {len(filled.skipped)} skipped")
        for problem in filled.skipped:
            print(f"  skipped: {untrusted.line(problem)}", file=sys.stderr)
    print(f"regen: {len(paths)} published files under {args.root} (leaderboard: results/leaderboard.md)")
    return 0
