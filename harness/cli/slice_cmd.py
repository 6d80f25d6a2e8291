"""``mcp-context-cost slice [--date D] [--json]``: the servers the weekly sweep re-measures for a date
(docs/METHODOLOGY.md, 'Trends over time'). ``--json`` adds ``shards``, the sweep
workflow's matrix (:func:`harness.db.shards.plan`). Exit 0, 2 bad catalog or date.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys

from harness.db.catalog import CatalogError, load_catalog
from harness.db import shards
from harness.db.rotation import slice_for, week_index, week_label
from harness.util import published, untrusted
from harness.util.cliargs import iso_date


def run(args: argparse.Namespace) -> int:
    """Print the slice for ``args.date`` (None: today, UTC); returns the exit code."""
    when = args.date or _dt.datetime.now(_dt.timezone.utc).date()
    try:
        catalog = load_catalog(args.catalog)
    except CatalogError as exc:
        print(untrusted.lines(exc), file=sys.stderr)
        return 2
    chosen = slice_for(catalog, when)
    names = [entry.name for entry in chosen]
    index = week_index(when)
    position = index % catalog.cycle_weeks
    if args.json:
        print(json.dumps({
            "week": week_label(when), "weekIndex": index, "position": position,
            "cycleWeeks": catalog.cycle_weeks, "reference": catalog.reference, "servers": names,
            "shards": shards.plan(chosen),
        }, indent=2))
    else:
        ref = f", reference {catalog.reference} included" if catalog.reference else ""
        print(f"# {week_label(when)}: week {position + 1} of {catalog.cycle_weeks}, "
              f"{len(names)} servers{ref}")
        for name in names:
            print(name)
    return 0


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "slice", help="list the servers this week's rotation re-measures (reads only)",
        description="Print the servers the weekly sweep re-measures for a date (UTC ISO week). Reads only: "
                    "writes nothing, commits nothing. Exit codes: 0 printed; 2 a bad --date or catalog.")
    parser.add_argument("--date", type=iso_date, default=None,
                        help="any day of the week to show, YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--catalog", default=published.CATALOG, help="catalog file (default: servers.yaml)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.set_defaults(func=run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.cli.slice_cmd``."""
    parser = argparse.ArgumentParser(prog="mcp-context-cost")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["slice", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
