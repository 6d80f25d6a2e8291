"""``mcp-context-cost pins [--update]``: each entry's pin against the newest release; ``--update``
rewrites them in ``servers.yaml``. Exit 0 done, 1 a pin behind (without ``--update``), 2 bad input.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.util import published, untrusted
from harness.util.cliargs import unknown_names


def register(sub) -> None:
    p = sub.add_parser("pins", help="compare each entry's pinned release with the newest on npm/PyPI; --update "
                                    "moves the pins in servers.yaml",
                       description="For every catalog entry whose command pins an exact release (npx pkg@1.2.3, "
                                   "uvx pkg@1.2.3, uvx --from pkg==1.2.3), ask its registry for the newest release "
                                   "(npm dist-tags.latest, PyPI info.version). With --update, rewrite only those "
                                   "versions in servers.yaml, every other byte unchanged.")
    p.add_argument("--catalog", default=published.CATALOG, help="catalog file (default: servers.yaml)")
    p.add_argument("--update", action="store_true", help="write the newest releases into the catalog")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="these entries only (repeatable)")
    p.add_argument("--metadata", metavar="DIR", help="read package metadata recorded under DIR instead of the registries")
    p.add_argument("--all", action="store_true", help="also list entries without a pin, and why")
    p.set_defaults(func=run)


def run(args) -> int:
    # Imported when the command runs: --help imports every command module.
    from harness.db import catalog_text, package_meta, pins
    from harness.db.catalog import CatalogError, load_catalog

    path = Path(args.catalog)
    try:
        catalog = load_catalog(path)
        if args.only:
            missing = unknown_names(args.only, (e.name for e in catalog.entries), "entry")
            if missing:
                raise CatalogError([missing])
    except CatalogError as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    changes = pins.plan(catalog, package_meta.source(args.metadata), set(args.only) or None)
    for change in changes:
        if change.pin is None:
            if args.all:
                print(untrusted.line(f"{change.name}: {change.note}"))
            continue
        moved = f" -> {change.newest}" if change.command else ""
        note = f" ({change.note})" if change.note and not change.command else ""
        print(untrusted.line(f"{change.name}: {change.pin.package} {change.pin.version}{moved}{note}"))
    behind = [c for c in changes if c.command is not None]
    if args.update and behind:
        try:
            catalog_text.write_checked(path, pins.apply(path.read_text(encoding="utf-8"), behind))
        except (OSError, ValueError, catalog_text.EditError, CatalogError) as exc:
            print(untrusted.lines(f"error: {path}: {exc}"), file=sys.stderr)
            return 2
    pinned = sum(c.pin is not None for c in changes)
    verb = "moved" if args.update else "behind"
    print(untrusted.line(f"pins: {pinned} pinned of {len(changes)}; {len(behind)} {verb}"))
    return 0 if args.update or not behind else 1
