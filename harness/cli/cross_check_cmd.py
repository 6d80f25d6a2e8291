"""``mcp-context-cost cross-check [--only a,b | --top N] [--asset PATH]``: the mcp-tokens column.

Not runnable until ``mcp_tokens.ASSET_SHA256`` is pinned (exit 2, nothing written); kept small, not grown.

docs/METHODOLOGY.md, "CLI cross-check".
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
import tempfile
from pathlib import Path

from harness.cli import selection
from harness.core.projection import mapped_tokens
from harness.core.record import ISOLATION_MODES
from harness.readings import store
from harness.db.catalog import CatalogError
from harness.core.record import NUMBERED
from harness.db.targets import target_for
from harness.probe import isolation, build_record as record
from harness.readings import mcp_tokens
from harness.probe.measure import measure
from harness.pages.published_records import RecordError
from harness.util.untrusted import line

KIND = "cross-check"
METHOD = "cli-cross-check/v1"


def register(sub) -> None:
    p = sub.add_parser("cross-check", help=f"count each server again with {mcp_tokens.NAME} (cli-cross-check/v1)",
                       description=f"Measure each chosen server as a sweep does, then run {mcp_tokens.label()} "
                                   "(analyze --provider tiktoken --model gpt-4o --format json) against the same "
                                   "command in the same isolation, and record both counts in results/cross-check.json. "
                                   "The CLI is taken only from its release asset with the pinned SHA-256. Exit codes: "
                                   "0 written; 2 bad input, or the CLI cannot be obtained or verified (nothing written).")
    selection.add_arguments(p, "the N servers with the largest published headline")
    p.add_argument("--asset", type=Path, help=f"the downloaded release asset ({mcp_tokens.ASSET}); default: download it")
    p.add_argument("--asset-url", action="store_true", help="print the pinned release asset's URL and exit")
    p.add_argument("--isolation", default="auto", choices=("auto", *ISOLATION_MODES),
                   help="auto (default) = sandbox where bubblewrap works, else host (as a sweep)")
    p.add_argument("--no-regen", action="store_true", help="write results/cross-check.json only, not the pages")
    p.set_defaults(func=run)


def run(args, expected_sha256: str | None = mcp_tokens.ASSET_SHA256) -> int:
    if getattr(args, "asset_url", False):
        print(mcp_tokens.asset_url())
        return 0
    try:
        mode = isolation.resolve_mode(args.isolation)  # this machine's fault: refused before any record is read
        catalog, records = selection.load(args)
        pool = {n: r for n, r in selection.numbered(records).items() if _entry(catalog, n).command}
        names = selection.choose(catalog, pool, args)
        previous = store.read(args.root, KIND)
    except (CatalogError, RecordError, LookupError, ValueError, store.ReadingsError) as exc:
        print(f"cross-check: nothing written: {line(exc)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mcp-context-cost-mcp-tokens-") as tmp:
        try:
            binary = mcp_tokens.provision(args.asset, Path(tmp), expected_sha256)
        except mcp_tokens.Unavailable as exc:
            print(f"cross-check: nothing written: {exc}", file=sys.stderr)
            return 2
        targets = [target_for(_entry(catalog, n)) for n in names]
        rows = asyncio.run(_check_all(binary, targets, mode, _today()))
    merged = store.merge_rows((previous or {}).get("rows", []), rows, [e.name for e in catalog.entries])
    path = store.write(args.root, KIND, {"method": METHOD, "release": mcp_tokens.label(), "rows": merged})
    _print(rows, path)
    if not args.no_regen:
        from harness.pages.regen import regen  # the pages' imports, only when they are regenerated

        regen(args.root)
    return 0


def _entry(catalog, name: str):
    return next(e for e in catalog.entries if e.name == name)


async def _check_all(binary: Path, targets: list, mode: str, date: str) -> list[dict]:
    return [await check_one(binary, t, mode, date) for t in targets]  # one server at a time: one sitting each


async def check_one(binary: Path, target, mode: str, date: str) -> dict:
    """One row: our measurement as a sweep makes it, then the CLI against the same launch."""
    measurement = await measure(target, isolation=mode, pass_declared_values=False)
    rec = record.build(measurement, isolation.describe(mode))
    row = {"server": target.name, "checkedAt": date, "release": mcp_tokens.label(), "isolation": mode,
           "ourStatus": rec["status"]}
    if rec["status"] not in NUMBERED:
        return row | {"status": "not-measured", "error": f"our measurement: {rec['status']}"}
    tools = rec["rawToolsCapture"] or []  # a numbered record always holds its capture
    row |= {"canonicalSha256": rec["canonicalSha256"], "totalTokens": rec["totalTokens"],
            "mappedTokens": mapped_tokens(tools), "toolNames": [str(t.get("name")) if isinstance(t, dict) else "" for t in tools]}
    try:
        report = await mcp_tokens.run(binary, target, mode, target.timeout_seconds * 2 + 30)
    except ValueError as exc:
        return row | {"status": "cli-failed", "error": str(exc)[:500]}
    return row | {"status": "compared", "cli": {"provider": report.provider, "model": report.model,
                                               "toolsTokens": report.tools_tokens, "totalTokens": report.total_tokens,
                                               "toolNames": list(report.tool_names)}}


def _today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def _print(rows: list[dict], path) -> None:
    for r in rows:
        if r["status"] != "compared":
            print(f"{r['server']:32} {r['status']}: {line(r.get('error', ''))}")
            continue
        same = sorted(r["cli"]["toolNames"]) == sorted(r["toolNames"])
        print(f"{r['server']:32} ours (projection) {r['mappedTokens']:>8,}  mcp-tokens {r['cli']['toolsTokens']:>8,}"
              f"{'' if same else '  (tool names differ: not printed)'}")
    print(f"cross-check: {len(rows)} row(s) written to {path}")
