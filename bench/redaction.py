"""Benchmark: what redaction adds to building a record, against counting in the same run.

Inputs: every published capture in ``results/*/measurement.json`` (real servers' tool lists).
For each: ``count_tools`` (what building a record costs anyway) and redaction of the capture by a
set of secrets shaped like a real run's (a declared API key, a bearer token, proxy credentials) —
done twice, as ``record.build`` does (before counting, then the final scrub). Also a hostile case:
one 4 MiB string full of percent-escapes (the slowest reading to build). Process CPU time, median
of ``--reps`` repetitions, interleaved.

Run: ``.venv/bin/python bench/redaction.py [--reps N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.core.counting import count_tools  # noqa: E402
from harness.core.jsparse import parse  # noqa: E402
from harness.probe.redact import Secrets  # noqa: E402

SECRETS = Secrets(["sk-live-Q7v9Zr2XwK4pN8dT1yB6mH3cJ5fL0gA", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
                   "pw-9Xq2Lr7Vt4Ns8Mk3Hj6Bd1Fz5Cy0Wg", "proxyuser:pw-9Xq2Lr7Vt4Ns8Mk3Hj6Bd1Fz5Cy0Wg"])


def _cpu(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    captures = []
    for path in sorted((ROOT / "results").glob("*/measurement.json")):
        record = parse(path.read_text(encoding="utf-8"))
        if isinstance(record.get("rawToolsCapture"), list):
            captures.append(record["rawToolsCapture"])
    size = sum(len(str(c)) for c in captures)
    count = _cpu(lambda: [count_tools(c) for c in captures], args.reps)
    redact = _cpu(lambda: [SECRETS.scrub(SECRETS.scrub(c)) for c in captures], args.reps)
    print(f"{len(captures)} published captures, {size / 1e6:.1f} MB of text, {len(SECRETS.values)} secrets")
    print(f"  count_tools (all):          {count:8.3f} s CPU")
    print(f"  redaction, twice (all):     {redact:8.3f} s CPU   ratio to counting: {redact / count:.2f}x")
    hostile = "a%20b" * (4 * 1024 * 1024 // 5)
    worst = _cpu(lambda: SECRETS.text(hostile), max(1, args.reps // 2))
    print(f"  4 MiB of percent-escapes:   {worst:8.3f} s CPU   ({4 / worst:.1f} MiB/s)")
    plain = "abcdefghij" * (4 * 1024 * 1024 // 10)
    fast = _cpu(lambda: SECRETS.text(plain), max(1, args.reps // 2))
    print(f"  4 MiB of plain text:        {fast:8.3f} s CPU   ({4 / fast:.1f} MiB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
