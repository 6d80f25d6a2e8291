"""``mcp-context-cost regen [--root .]``: rewrite the leaderboard, server pages, trend pictures and
dashboard from the records, the catalog and history.csv (see :mod:`harness.publish.regen`).

Exit 0 after writing (prints how many files are published and where the leaderboard is); 2 when
an input cannot be used (catalog, a record, or history.csv), with every problem on stderr and
nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.db.catalog import CatalogError
from harness.db.history import HistoryError
from harness.publish.records import RecordError
from harness.publish.regen import regen
from harness.util import untrusted


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "regen", help="regenerate the leaderboard, server pages and dashboard from what is on disk (never commits)",
        description="Rewrite results/leaderboard.md and .csv, docs/servers/*.md, the trend pictures and "
                    "docs/index.html from servers.yaml, results/*/measurement.json and history.csv. Commits "
                    "nothing. Exit codes: 0 written; 2 an input cannot be used (nothing written).")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="repository root holding servers.yaml, results/ and history.csv (default: .)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        paths = regen(args.root)
    except (CatalogError, RecordError, HistoryError) as exc:
        print("regen: nothing written:\n" + untrusted.lines(exc), file=sys.stderr)
        return 2
    print(f"regen: {len(paths)} published files under {args.root} (leaderboard: results/leaderboard.md)")
    return 0
