"""``mcp-context-cost import``: propose catalog entries from registry pages, package lists and names,
triage them and append the accepted ones to ``servers.yaml`` (docs/CATALOG.md). Exit 0 done, 2 bad
input.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from pathlib import Path

from harness.util import atomic, published, untrusted
from harness.util.cliargs import seconds


def register(sub) -> None:
    p = sub.add_parser("import", help="propose catalog entries from registry/package metadata, triage them by one "
                                      "launch each, and append the accepted ones to servers.yaml",
                       description="Read candidates (server.json files or registry list URLs, package-list TSV "
                                   "files, --npm/--pypi names), check each against its registry's metadata, launch "
                                   "each proposal once under the isolation, and append those that list tools or ask "
                                   "for a credential to the catalog with their triage. Nothing is measured for "
                                   "publishing and nothing is committed.")
    p.add_argument("sources", nargs="*", metavar="FILE|URL", help="server.json / registry list (file or URL) or TSV")
    p.add_argument("--npm", action="append", default=[], metavar="NAME[@VERSION]", help="an npm package (repeatable)")
    p.add_argument("--pypi", action="append", default=[], metavar="NAME[==VERSION]", help="a PyPI package (repeatable)")
    p.add_argument("--catalog", default=published.CATALOG, help="catalog to append to (default: servers.yaml)")
    p.add_argument("--metadata", metavar="DIR", help="read package metadata recorded under DIR instead of the registries")
    p.add_argument("--record-metadata", metavar="DIR", help="also write each registry answer under DIR (fixtures)")
    p.add_argument("--limit", type=int, default=0, help="propose at most N new entries (0: no limit)")
    p.add_argument("--dry-run", action="store_true", help="propose only: no launches, the catalog untouched")
    p.add_argument("--concurrency", type=int, default=2, help="launches at once (default 2)")
    p.add_argument("--timeout", type=seconds, default=90.0, help="each launch's budget in seconds (default 90)")
    p.add_argument("--isolation", default="auto", choices=("auto", "host", "sandbox"),
                   help="auto (default) = sandbox where bubblewrap works, else host")
    p.add_argument("--report", metavar="FILE", help="write every candidate's outcome as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the outcomes as a Markdown table (a pull request body)")
    p.set_defaults(func=run)


def run(args) -> int:
    # Imported when the command runs: --help imports every command module.
    from harness.db import catalog_text, import_sources, importer, package_meta
    from harness.db.catalog import CatalogError, load_catalog
    from harness.probe import isolation

    catalog_path = Path(args.catalog)
    try:
        # The isolation is this machine's to give: refused before the registry is read or anything runs.
        mode = None if args.dry_run else isolation.resolve_mode(args.isolation)
        catalog = load_catalog(catalog_path)
        candidates = [c for source in args.sources for c in import_sources.read_candidates(source)]
        candidates += import_sources.from_names(args.npm, args.pypi)
    except (CatalogError, import_sources.ImportInputError, isolation.Unavailable) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    if not candidates:
        print("error: no candidates: give a server.json or TSV file, a registry URL, --npm or --pypi", file=sys.stderr)
        return 2
    src = package_meta.source(args.metadata, args.record_metadata)
    proposals = importer.propose(candidates, catalog, src)
    if args.limit:
        kept = [p for p in proposals if p.entry is not None][:args.limit]
        proposals = [p for p in proposals if p.entry is None or p in kept]
    for prop in proposals:
        if prop.entry is None:
            print(untrusted.line(f"{prop.name}: not proposed: {prop.reason}"), file=sys.stderr)
    date = dt.datetime.now(dt.timezone.utc).date()
    if mode is not None:
        asyncio.run(importer.triage(proposals, mode, concurrency=args.concurrency, timeout_seconds=args.timeout,
                                    say=lambda line: print(untrusted.line(line), file=sys.stderr)))
        chosen = importer.accepted(proposals)
        try:
            text = catalog_path.read_text(encoding="utf-8")
            new = catalog_text.append_entries(text, [importer.with_triage(p, date) for p in chosen])
            if new != text:
                catalog_text.write_checked(catalog_path, new)
        except (OSError, catalog_text.EditError, CatalogError) as exc:
            print(untrusted.lines(f"error: {catalog_path}: {exc}"), file=sys.stderr)
            return 2
    rows = importer.summary_rows(proposals)
    if args.dry_run:
        for prop in proposals:
            if prop.entry is not None:
                print(untrusted.lines(importer_yaml(prop.entry)))
    if args.report:
        atomic.write_text(args.report, json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    if args.markdown:
        atomic.write_text(args.markdown, markdown(rows, date))
    counts = {o: sum(r["outcome"] == o for r in rows) for o in (*importer.OUTCOMES, "proposed", "not-proposed")}
    print(untrusted.line(f"import: {len(rows)} candidates; " + ", ".join(f"{n} {o}" for o, n in counts.items() if n)
                         + f"; {sum(r['accepted'] for r in rows)} added to {catalog_path}"))
    return 0


def importer_yaml(entry: dict) -> str:
    from harness.db.catalog_text import dump_entry  # as in run

    return dump_entry(entry).rstrip("\n")


def markdown(rows: list[dict], date: dt.date) -> str:
    """The outcomes as a Markdown table, every cell through the untrusted-text path."""
    from harness.pages.text import md  # --help imports every command module: pages load when used

    lines = [f"Catalog import of {date.isoformat()}: each candidate launched once here and triaged.", "",
             "| package | registry | outcome | added | evidence |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {md(r['package'])} | {r['registry']} | {r['outcome']} | {'yes' if r['accepted'] else 'no'} "
                     f"| {md(r['evidence'], 300)} |")
    return "\n".join(lines) + "\n"
