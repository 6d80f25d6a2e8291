"""``mcp-context-cost releases``: cost per release of each entry, rebuilt from git, written to
``results/releases.json`` by ``harness.pages.releases.refresh``. Exit 0 done, 2 bad input (bad catalog, no
repository, shallow clone).
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.util import published, untrusted


def register(sub) -> None:
    p = sub.add_parser("releases", help="cost per release of every entry, from the git history of its records "
                                        "(writes results/releases.json)",
                       description="Walk every version of results/<name>/measurement.json that git holds, oldest "
                                   "first, and write one row per move to another release of the package (tokens "
                                   "before and after, tools added and removed) to results/releases.json. Nothing is "
                                   "committed.")
    p.add_argument("--catalog", default=published.CATALOG, help="catalog file (default: servers.yaml); the repository "
                                                             "holding it is read")
    p.add_argument("--out", help="output file (default: results/releases.json beside the catalog)")
    p.set_defaults(func=run)


def run(args) -> int:
    # Imported when the command runs: --help imports every command module.
    from harness.db.catalog import CatalogError, load_catalog
    from harness.pages import releases
    from harness.pages.backfill import BackfillError
    from harness.pages.published_records import RecordError, load_records

    catalog_path = Path(args.catalog).resolve()
    root = catalog_path.parent
    out = Path(args.out) if args.out else root / published.RELEASES
    try:
        names = [e.name for e in load_catalog(catalog_path).entries]
        done = releases.refresh(root, names, load_records(root / published.RESULTS, names), out)
    except (CatalogError, BackfillError, RecordError) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    moves = [row for name in sorted(done.by_server) for row in done.by_server[name]]
    for row in moves:
        print(untrusted.line(f"{row.server}: {row.summary()}"))
    said = f"wrote {out}" if done.changed else (f"{out} unchanged" if out.exists() else "no file written")
    print(untrusted.line(f"releases: {len(moves)} release moves over {len(names)} entries; {said}"))
    return 0
