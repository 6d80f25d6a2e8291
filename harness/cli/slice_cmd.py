"""``mcp-context-cost slice``: print the servers the weekly sweep re-measures for a date.

Usage::

    mcp-context-cost slice [--date YYYY-MM-DD] [--catalog servers.yaml] [--json]

Text output: a ``#`` header line naming the UTC ISO week and its position in the cycle, then one
server name per line in catalog order. ``--json`` prints one object instead::

    {"week": "2026-W49", "weekIndex": 2970, "position": 0, "cycleWeeks": 3,
     "reference": "memory", "servers": ["filesystem", ...],
     "shards": [{"shard": 1, "servers": 44, "packages": "<16 hex>"}, ...]}

``shards`` is the sweep workflow's matrix for the slice (``harness.db.shards.plan``).

The date defaults to today in UTC. Exit codes: 0 on success; 2 when the catalog is unusable (the
``CatalogError`` lines go to stderr) or ``--date`` is malformed (argparse's own error).
Methodology section: "How often a row gets a new point".
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys

from harness.db.catalog import CatalogError, load_catalog
from harness.db import shards
from harness.db.rotation import slice_for, week_index, week_label
from harness.util import untrusted
from harness.util.cliargs import iso_date


def run(args: argparse.Namespace) -> int:
    """Print the slice for ``args.date`` (a ``date`` or ``None`` for today, UTC) from
    ``args.catalog``; return the exit code."""
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
    """Add the ``slice`` subcommand to an ``argparse`` subparsers object; sets ``func``."""
    parser = subparsers.add_parser(
        "slice", help="list the servers this week's rotation re-measures (reads only)",
        description="Print the servers the weekly sweep re-measures for a date (UTC ISO week). Reads only: "
                    "writes nothing, commits nothing. Exit codes: 0 printed; 2 a bad --date or catalog.")
    parser.add_argument("--date", type=iso_date, default=None,
                        help="any day of the week to show, YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--catalog", default="servers.yaml", help="catalog file (default: servers.yaml)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.set_defaults(func=run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point: ``python -m harness.cli.slice_cmd [options]``."""
    parser = argparse.ArgumentParser(prog="mcp-context-cost")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["slice", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
