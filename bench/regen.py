"""Benchmark: ``regen`` over synthetic repositories of 100, 300 and 1,000 catalog entries, each with
156 weekly history rows (three years), and the growth ratio from 100 to 1,000.

Each synthetic entry has a record (about 80% measured or dynamic with 12 tools and, for a third of
them, server instructions; the rest spread over the failure statuses) and a history whose
isolation switches from docker to host half-way, with the oldest rows not recorded. Timed: a cold
``regen`` (no published files yet) and a warm one (everything already up to date). Target: linear
growth, under 10 s at 1,000 entries.

Run: ``.venv/bin/python bench/regen.py [--sizes 100,300,1000] [--reps 1]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from harness.core import tokenizer  # noqa: E402
from harness.probe.record import serialize  # noqa: E402
from harness.publish.regen import regen  # noqa: E402

WEEKS = 156
FAILURES = ("auth-required", "startup-failure", "timeout", "not-applicable", "protocol-mismatch", "remote-auth-wall")
HOST = {"mode": "host", "os": "linux", "arch": "x86_64", "image": None, "network": "host",
        "runtimes": {"node": "v20.20.2"}, "note": None}


def build(root: Path, n: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    names = [f"server-{i:04d}" for i in range(n)]
    (root / "servers.yaml").write_text(yaml.safe_dump(
        {"servers": [{"name": name, "command": f"npx -y {name}@1.0.0", "category": "community"} for name in names]},
        sort_keys=False), encoding="utf-8")
    start = dt.date(2026, 11, 30) - dt.timedelta(weeks=WEEKS - 1)
    history = ["date,server,tokens,toolCount,status,isolation"]
    for i, name in enumerate(names):
        status = FAILURES[i % len(FAILURES)] if i % 5 == 4 else ("dynamic" if i % 11 == 0 else "measured")
        (root / "results" / name).mkdir(parents=True)
        (root / "results" / name / "measurement.json").write_text(serialize(_record(rnd, name, status, i)), encoding="utf-8")
        tokens = rnd.randint(200, 40_000)
        for week in range(WEEKS):
            day = (start + dt.timedelta(weeks=week)).isoformat()
            iso = "" if week < 20 else ("docker" if week < WEEKS // 2 else "host")
            if rnd.random() < 0.03:
                history.append(f"{day},{name},,,timeout,{iso}")
            else:
                tokens = max(1, tokens + rnd.randint(-50, 60))
                history.append(f"{day},{name},{tokens},12,measured,{iso}")
    (root / "history.csv").write_text("\n".join(history) + "\n", encoding="utf-8")


def _record(rnd: random.Random, name: str, status: str, i: int) -> dict:
    record = {"methodologyVersion": "1.0", "provider": "tiktoken", "encoding": "o200k_base", "server": name,
              "status": status, "measuredAt": "2026-11-30T12:00:00.000Z", "launchCommand": f"npx -y {name}@1.0.0",
              "envVarNames": [], "isolation": HOST, "timeoutMs": 60000, "harnessVersion": "0.1.0",
              "serverName": name, "serverVersion": "1.0.0",
              "serverInstructions": ("Use these tools to work with the service. " * 30) if i % 3 == 0 else None,
              "requestedProtocolVersion": "2025-11-25", "negotiatedProtocolVersion": "2025-11-25", "phase": "done",
              "attempts": [], "notes": [], "totalTokens": None, "toolCount": None, "canonicalSha256": None,
              "canonicalLength": None, "tools": [], "rawToolsCapture": None}
    if status not in ("measured", "dynamic"):
        record["notes"] = [f"{status}: synthetic failure note for {name}"]
        return record
    tools = [{"name": f"tool_{k}", "description": f"Does thing {k} with the service.",
              "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}} for k in range(12)]
    record |= {"totalTokens": rnd.randint(200, 40_000), "toolCount": 12, "canonicalSha256": "0" * 64,
               "canonicalLength": 3000, "rawToolsCapture": tools,
               "tools": [{"name": t["name"], "tokens": rnd.randint(20, 400), "descriptionTokens": 8,
                          "inputSchemaTokens": 14} for t in tools]}
    return record


def timed(root: Path, reps: int) -> tuple[float, float, int]:
    cold, warm, files = [], [], 0
    for _ in range(reps):
        for folder in ("docs", "results/leaderboard.md", "results/leaderboard.csv"):
            path = root / folder
            if path.is_dir():
                import shutil
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        t0 = time.perf_counter()
        files = len(regen(root))
        cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        regen(root)
        warm.append(time.perf_counter() - t0)
    return min(cold), min(warm), files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,300,1000")
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    tokenizer.provision()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    print(f"{'entries':>8} {'history rows':>13} {'files':>6} {'cold s':>8} {'warm s':>8} {'cold ms/entry':>14}")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"regen-bench-{n}-") as tmp:
            root = Path(tmp)
            build(root, n)
            cold, warm, files = timed(root, args.reps)
            results[n] = cold
            print(f"{n:>8} {n * WEEKS:>13} {files:>6} {cold:>8.2f} {warm:>8.2f} {1000 * cold / n:>14.2f}")
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        print(f"growth {lo} -> {hi}: x{results[hi] / results[lo]:.2f} for x{hi / lo:.0f} entries "
              f"(linear = x{hi / lo:.0f}); {hi} entries in {results[hi]:.2f} s (target < 10 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
