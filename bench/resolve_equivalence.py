"""Resolve-once equivalence over a catalog: every entry measured through its
launcher and from its package resolved once, as a sweep measures it (declared names get dummy
values; the isolation a sweep would use). Prints, per entry: both statuses, whether the
canonicalSha256 (and totalTokens) agree, the resolved version; and at the end the counts.

An entry whose command is not an ``npx -y``/``uvx`` form that ``harness.probe.resolve`` handles,
or whose resolution fails, is measured once (both ways are then the same launch by construction)
and counted apart. ``dynamic`` captures are compared too but counted apart (a server whose tools
differ between launches differs between any two measurements).

Resumable: each finished entry is appended to a JSON-lines file (``--out``, default
``~/.cache/mcp-context-cost/bench/resolve-equivalence.jsonl``) and skipped on the next run;
``--fresh`` starts over. ``--jobs`` entries run at once (default 2: each measurement is already
two launches).

Run: ``.venv/bin/python bench/resolve_equivalence.py [--catalog servers.yaml] [--only a,b] [--limit N]
[--jobs 2] [--isolation auto|sandbox|host] [--out FILE] [--fresh]``
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.db.catalog import load_catalog  # noqa: E402
from harness.db.targets import target_for  # noqa: E402
from harness.probe import isolation, harness_bug, build_record as record, resolve  # noqa: E402
from harness.probe.install import Install  # noqa: E402
from harness.probe.measure import measure  # noqa: E402
from harness.util import untrusted  # noqa: E402

DEFAULT_OUT = Path(os.environ.get("MCP_CONTEXT_COST_CACHE") or Path.home() / ".cache" / "mcp-context-cost") \
    / "bench" / "resolve-equivalence.jsonl"


async def one(entry, mode: str) -> dict:
    """Both ways for one entry: a row of statuses, hashes, tokens and the resolved version."""
    target = target_for(entry)
    iso = isolation.describe(mode)
    row = {"name": entry.name, "resolvable": resolve.plan(target.command) is not None}
    t0 = time.monotonic()
    found = await resolve.resolve(target, mode, pass_declared_values=False) if row["resolvable"] else None
    row["resolveSeconds"] = round(time.monotonic() - t0, 2)
    row["version"] = found.version if found else None
    plain = await _record(target, mode, iso, installed=Install(target))  # through the launcher, no install step
    row["plain"] = _figures(plain)
    if found is not None:
        once = await _record(dataclasses.replace(target, resolved=found), mode, iso)
        row["once"] = _figures(once)
        row["same"] = (plain["status"], plain["canonicalSha256"], plain["totalTokens"]) == \
            (once["status"], once["canonicalSha256"], once["totalTokens"])
    return row


async def _record(target, mode: str, iso: dict, installed=None) -> dict:
    t0 = time.monotonic()
    try:
        rec = record.build(await measure(target, isolation=mode, pass_declared_values=False, installed=installed), iso)
    except Exception as exc:  # noqa: BLE001 - a harness bug is this entry's row, not the run's end
        rec = record.build(harness_bug.measurement(target, exc), iso)
    rec["_seconds"] = round(time.monotonic() - t0, 2)
    return rec


def _figures(rec: dict) -> dict:
    return {"status": rec["status"], "sha": rec["canonicalSha256"], "tokens": rec["totalTokens"],
            "seconds": rec["_seconds"]}


def line(row: dict) -> str:
    plain = row["plain"]
    if "once" not in row:
        why = "not a handled launcher form" if not row["resolvable"] else "resolution failed: launcher only"
        return f"  {row['name']:34s} {plain['status']:16s} {why}"
    once = row["once"]
    verdict = "SAME" if row["same"] else "DIFFERENT"
    sha = (plain["sha"] or "-")[:12]
    return (f"  {row['name']:34s} {plain['status']:16s} {once['status']:16s} {verdict:9s} {sha}  "
            f"{plain['tokens'] if plain['tokens'] is not None else '-':>7}  v{row['version']}  "
            f"({plain['seconds']:.1f}s vs {once['seconds']:.1f}s + resolve {row['resolveSeconds']:.1f}s)")


def summary(rows: list[dict]) -> list[str]:
    both = [r for r in rows if "once" in r]
    measured = [r for r in both if r["plain"]["status"] == "measured" and r["once"]["status"] == "measured"]
    dynamic = [r for r in both if "dynamic" in (r["plain"]["status"], r["once"]["status"])]
    differ = [r for r in both if not r["same"]]
    return [
        f"entries: {len(rows)}; resolved and measured both ways: {len(both)}; launcher only: {len(rows) - len(both)}",
        f"measured both ways: {len(measured)}, identical canonicalSha256 and totalTokens: "
        f"{sum(r['same'] for r in measured)} / {len(measured)}",
        f"dynamic either way (not comparable): {len(dynamic)}; any difference (status, hash or tokens): "
        f"{len(differ)}" + (f" — {', '.join(r['name'] for r in differ)}" if differ else ""),
    ]


async def run(entries, mode: str, jobs: int, out: Path) -> list[dict]:
    done = _load(out)
    todo = [e for e in entries if e.name not in done]
    print(f"{len(entries)} entries, {len(done)} already in {out}, {len(todo)} to measure; isolation {mode}", flush=True)
    gate = asyncio.Semaphore(max(1, jobs))
    rows = {name: row for name, row in done.items() if name in {e.name for e in entries}}

    async def go(entry):
        async with gate:
            row = await one(entry, mode)
        rows[entry.name] = row
        with out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        print(untrusted.line(line(row)), flush=True)

    await asyncio.gather(*(go(e) for e in todo))
    return [rows[e.name] for e in entries if e.name in rows]


def _load(out: Path) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    try:
        for text in out.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(text)
                rows[row["name"]] = row
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by an interrupted run: that entry runs again
    except FileNotFoundError:
        pass
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalog", default=str(ROOT / "servers.yaml"))
    parser.add_argument("--only", help="comma-separated entry names")
    parser.add_argument("--limit", type=int, help="the first N (stdio) entries only")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--isolation", default="auto", choices=("auto", "sandbox", "host"))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--fresh", action="store_true", help="forget earlier results in --out")
    args = parser.parse_args(argv)
    mode = isolation.resolve_mode(args.isolation)
    entries = [e for e in load_catalog(args.catalog).entries if e.command]
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if e.name in wanted]
    entries = entries[:args.limit] if args.limit else entries
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        args.out.unlink(missing_ok=True)
    rows = asyncio.run(run(entries, mode, args.jobs, args.out))
    print(f"all {len(rows)} rows, in catalog order (earlier runs' included):")
    print("\n".join(untrusted.line(line(r)) for r in rows))
    print("\n".join(summary(rows)))
    return 0 if all(r.get("same", True) for r in rows if "dynamic" not in (r["plain"]["status"],
                                                                         r.get("once", {}).get("status"))) else 1


if __name__ == "__main__":
    sys.exit(main())
