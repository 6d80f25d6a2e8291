"""``mcp-context-cost capability-probe [--only a,b | --top N]``: does a client that declares more see
more tools? Writes ``results/capability-probe.json``; no record is touched (docs/METHODOLOGY.md,
'What the client declares, and the capability probe'). Exit 0 written, 2 bad input.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys

from harness.cli import selection
from harness.core.record import ISOLATION_MODES
from harness.readings import store
from harness.db.catalog import CatalogError
from harness.db.sweep import default_concurrency
from harness.db.targets import target_for
from harness.readings import capability_probe as cp
from harness.probe import isolation
from harness.pages.published_records import RecordError
from harness.util.cliargs import positive_int
from harness.util.untrusted import line

KIND = "capability-probe"


def register(sub) -> None:
    p = sub.add_parser("capability-probe", help="capture each entry declaring no capabilities and roots+elicitation; "
                                                "record the servers whose tool set differs",
                       description="Capture each entry twice under the sweep's isolation, differing only in the client "
                                   "capabilities declared at initialize (none; roots and elicitation, answered with an "
                                   "empty root list and a declined elicitation), and record in "
                                   "results/capability-probe.json the servers whose tool set differs. Exit codes: 0 "
                                   "written; 2 bad input.")
    selection.add_arguments(p, "the N entries with the largest published headline")
    p.add_argument("--isolation", default="auto", choices=("auto", *ISOLATION_MODES),
                   help="auto (default) = sandbox where bubblewrap works, else host (as a sweep)")
    p.add_argument("--concurrency", type=positive_int, default=default_concurrency(),
                   help="entries probed at once (default: 4 per CPU core, 2 to 16; here %(default)s)")
    p.add_argument("--no-regen", action="store_true", help="write results/capability-probe.json only, not the pages")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        catalog, records = selection.load(args)
        names = selection.choose(catalog, None, args, records)
        previous = store.read(args.root, KIND)
        mode = isolation.resolve_mode(args.isolation)
    except (CatalogError, RecordError, LookupError, ValueError, store.ReadingsError) as exc:
        print(f"capability-probe: nothing written: {line(exc)}", file=sys.stderr)
        return 2
    entries = {e.name: e for e in catalog.entries}
    pairs = asyncio.run(_probe_all([target_for(entries[n]) for n in names], mode, args.concurrency))
    doc = document(pairs, previous, [e.name for e in catalog.entries], mode, _today())
    path = store.write(args.root, KIND, doc)
    _print(doc, pairs, path)
    if not args.no_regen:
        from harness.pages.regen import regen  # the heaviest import; --no-regen never needs it

        regen(args.root)
    return 0


async def _probe_all(targets, mode: str, concurrency: int) -> list:
    gate = asyncio.Semaphore(concurrency)

    async def one(target):
        async with gate:
            return await cp.probe(target, mode)

    return list(await asyncio.gather(*(one(t) for t in targets)))


def document(pairs: list, previous: dict | None, names: list[str], mode: str, date: str) -> dict:
    """The file after this run: rows of differing servers (this run's replace the probed ones')."""
    probed = {p.target.name for p in pairs}
    fresh = []
    for pair in pairs:
        diff = cp.difference(pair.without.capture.tools, pair.with_.capture.tools) if pair.compared else None
        if diff is not None:
            fresh.append({"server": pair.target.name, "probedAt": date, "isolation": mode} | diff)
    kept = [r for r in (previous or {}).get("rows", []) if r.get("server") not in probed]
    statuses = lambda p: {"server": p.target.name, "withoutCapabilities": p.without.status,  # noqa: E731
                          "withCapabilities": p.with_.status}
    return {"method": cp.METHOD, "declared": cp.DECLARED, "answers": cp.ANSWERS,
            "lastRun": {"probedAt": date, "isolation": mode, "probed": len(pairs),
                        "compared": sum(p.compared for p in pairs),
                        "notCompared": [statuses(p) for p in pairs if not p.compared],
                        "statusChanged": [statuses(p) for p in pairs if p.status_changed]},
            "rows": store.merge_rows(kept, fresh, names)}


def _today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def _print(doc: dict, pairs: list, path) -> None:
    run_ = doc["lastRun"]
    probed = {p.target.name for p in pairs}
    for row in doc["rows"]:
        if row["server"] in probed:
            gained = ", ".join(line(t["name"]) for t in row["gained"]) or "none"
            print(f"{row['server']:32} differs: {row['deltaTokens']:+,} tokens; gained: {gained}; "
                  f"lost {len(row['lost'])}, changed {len(row['changed'])}")
    print(f"capability-probe: {run_['probed']} probed, {run_['compared']} compared, "
          f"{sum(r['server'] in probed for r in doc['rows'])} differ; written to {path}")
