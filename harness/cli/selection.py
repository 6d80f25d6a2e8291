"""Which entries a beside-the-headline command works on: ``--only a,b``, ``--top N`` (largest published
headlines), else all (``divergence``, ``cross-check``, ``capability-probe``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.core.record import NUMBERED, Record
from harness.db.catalog import Catalog, load_catalog
from harness.pages.published_records import load_records
from harness.util import published
from harness.util.cliargs import positive_int, unknown_names


def add_arguments(parser: argparse.ArgumentParser, top_help: str) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--only", help="comma-separated catalog entry names")
    which.add_argument("--top", type=positive_int, metavar="N", help=top_help)
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root (default: .)")
    parser.add_argument("--catalog", default=published.CATALOG, help="catalog path relative to --root")


def load(args) -> tuple[Catalog, dict[str, Record]]:
    """The catalog and every published record of its entries; CatalogError, RecordError."""
    catalog = load_catalog(Path(args.root) / args.catalog)
    return catalog, load_records(Path(args.root) / published.RESULTS, [e.name for e in catalog.entries])


def numbered(records: dict[str, Record]) -> dict[str, Record]:
    """The records with a headline number (measured or dynamic)."""
    return {name: r for name, r in records.items() if r.get("status") in NUMBERED}


def choose(catalog: Catalog, pool: dict[str, Record] | None, args, records: dict[str, Record] | None = None) -> list[str]:
    """Entry names in catalog order by ``--only``, ``--top N`` (ties by name) or all of ``pool``;
    LookupError naming what is missing.
    """
    names = [e.name for e in catalog.entries]
    usable = [n for n in names if pool is None or n in pool]
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        if not wanted:  # "--only ," names nothing: refused, not an empty run
            raise LookupError("--only names no entry: give comma-separated catalog entry names")
        unknown = unknown_names(wanted, names, "--only names not in the catalog")
        if unknown:
            raise LookupError(unknown)
        unusable = [n for n in wanted if n not in usable]
        if unusable:
            raise LookupError(f"--only names without a published number: {', '.join(unusable)}")
        return [n for n in names if n in wanted]
    if args.top:
        published: Mapping[str, Mapping[str, Any]] = records if records is not None else (pool or {})
        weight = lambda n: int((published.get(n) or {}).get("totalTokens") or 0)  # noqa: E731
        chosen = set(sorted(usable, key=lambda n: (-weight(n), n))[: args.top])
        return [n for n in usable if n in chosen]
    return usable
