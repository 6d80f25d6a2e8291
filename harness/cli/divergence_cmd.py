"""``mcp-context-cost divergence [--only a,b | --top N]``: the Claude divergence, merged into
``results/divergence.json`` (docs/METHODOLOGY.md, 'Claude divergence'). Exit 0 written, 1 the
request without tools could not be counted, 2 bad input or no ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys

from harness.cli import selection
from harness.core.canonical import stringify
from harness.core.projection import mapped_tokens, request_tools
from harness.core.record import Record
from harness.readings import store
from harness.db.catalog import CatalogError
from harness.readings.claude import MODEL, ClaudeCounter, CountFailed, MissingKey, tools_delta
from harness.pages.published_records import RecordError
from harness.util.untrusted import line

KIND = "divergence"
METHOD = "tools-delta/v1"


def register(sub) -> None:
    p = sub.add_parser("divergence", help="count each published capture with Anthropic's count_tokens (tools-delta/v1)",
                       description="Count each published capture's name/description/input_schema projection with "
                                   f"Anthropic's count_tokens endpoint (model {MODEL}) minus the same request without "
                                   "tools, and record it in results/divergence.json beside the o200k figures. Needs "
                                   "ANTHROPIC_API_KEY (never printed or recorded). Exit codes: 0 written; 1 the "
                                   "endpoint could not count the request without tools; 2 bad input or no key.")
    selection.add_arguments(p, "the N servers with the largest published headline")
    p.add_argument("--no-regen", action="store_true", help="write results/divergence.json only, not the pages")
    p.set_defaults(func=run)


def run(args, counter_factory=ClaudeCounter) -> int:
    try:
        catalog, records = selection.load(args)
        pool = selection.numbered(records)
        names = selection.choose(catalog, pool, args)
        previous = store.read(args.root, KIND)
    except (CatalogError, RecordError, LookupError, store.ReadingsError) as exc:
        print(f"divergence: nothing written: {line(exc)}", file=sys.stderr)
        return 2
    try:
        counter = counter_factory()
    except MissingKey as exc:
        print(f"divergence: nothing written: {exc}", file=sys.stderr)
        return 2
    try:
        rows = count_rows(counter, [(n, pool[n]) for n in names], _today())
    except CountFailed as exc:
        print(f"divergence: nothing written: the request without tools could not be counted: {line(exc)}", file=sys.stderr)
        return 1
    finally:
        counter.close()
    merged = store.merge_rows((previous or {}).get("rows", []), rows, [e.name for e in catalog.entries])
    path = store.write(args.root, KIND, {"method": METHOD, "rows": merged})
    _print(rows, path)
    if not args.no_regen:
        from harness.pages.regen import regen  # the heaviest import; --no-regen never needs it

        regen(args.root)
    return 0


def count_rows(counter, chosen: list[tuple[str, Record]], date: str) -> list[dict]:
    """One row per ``(name, record)``; CountFailed when the request without tools cannot be counted."""
    without = counter.input_tokens()
    return [count_row(name, record, counter, without, date) for name, record in chosen]


def count_row(name: str, record: Record, counter, without: int, date: str) -> dict:
    """The divergence row of one published ``record``; ``without`` counts the request with no tools."""
    tools = record["rawToolsCapture"]
    assert tools is not None and record["totalTokens"] is not None, "a numbered record has its capture and total"
    row = {"server": name, "model": counter.model, "countedAt": date,
           "canonicalSha256": hashlib.sha256(stringify(tools).encode("utf-8")).hexdigest(),
           "totalTokens": int(record["totalTokens"]), "mappedTokens": mapped_tokens(tools), "toolCount": len(tools)}
    if not tools:  # nothing to send: the request with no tools is the request
        return row | {"withToolsTokens": without, "withoutToolsTokens": without, "claudeTokens": 0}
    try:
        with_tools = counter.input_tokens(request_tools(tools))
    except CountFailed as exc:
        return row | {"error": str(exc)}
    return row | {"withToolsTokens": with_tools, "withoutToolsTokens": without,
                  "claudeTokens": tools_delta(with_tools, without)}


def _today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def _print(rows: list[dict], path) -> None:
    for r in rows:
        if "error" in r:
            print(f"{r['server']:32} error: {line(r['error'])}")
        else:
            ratio = r["claudeTokens"] / r["totalTokens"] if r["totalTokens"] else 0.0
            print(f"{r['server']:32} o200k {r['totalTokens']:>8,}  mapped {r['mappedTokens']:>8,}  "
                  f"claude {r['claudeTokens']:>8,}  ({ratio:.2f}x)")
    print(f"divergence: {len(rows)} row(s) written to {path}")
