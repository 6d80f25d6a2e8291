"""Benchmark: canonicalize + count (``count_tools``) against the floor, in one run.

Floor: ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))`` + ``encode_ordinary`` of the
whole string — what a naive implementation pays for the total alone (and gets wrong on the
adversarial cases). Ours: ``count_tools``, i.e. JS-exact stringify, total, SHA-256 and per-tool
diagnostics. For context, "naive per-tool" adds what the floor would pay to count every tool,
description and schema on its own. Every published conformance capture, several repetitions,
interleaved; wall and process CPU time. Target: ours / floor at most 1.5x (judged on CPU time
when single-threaded, the default, since that is immune to other load; on wall time otherwise).

Run: ``.venv/bin/python bench/canonical.py [--reps N]``. ``MCP_CONTEXT_COST_THREADS=1`` makes
the counting single-threaded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.core import counting, tokenizer  # noqa: E402
from harness.core.canonical import stringify  # noqa: E402
from harness.core.counting import count_tools  # noqa: E402
from harness.core.jsparse import parse  # noqa: E402

PUBLISHED = ROOT / "tests" / "conformance" / "published"


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    files = sorted(PUBLISHED.glob("*.json"))
    if not files:
        print(f"no captures under {PUBLISHED}", file=sys.stderr)
        return 2
    captures = [parse(f.read_text(encoding="utf-8"))["capture"] for f in files]
    enc = tokenizer.get_encoding()
    prov = tokenizer.provision()

    def floor() -> int:
        return sum(len(enc.encode_ordinary(_dumps(c))) for c in captures)

    def naive_per_tool() -> int:
        n = floor()
        for tools in captures:
            for t in tools:
                n += len(enc.encode_ordinary(_dumps(t)))
                if isinstance(t, dict):
                    for key in ("description", "inputSchema"):
                        v = t.get(key)
                        if v:
                            n += len(enc.encode_ordinary(v if isinstance(v, str) else _dumps(v)))
        return n

    def headline() -> int:
        # The same work as the floor, done the project's way: canonical form + totalTokens.
        return sum(len(enc.encode_ordinary(stringify(c))) for c in captures)

    def ours() -> int:
        return sum(count_tools(c).totalTokens for c in captures)

    runs = (("floor", "floor: json.dumps+encode_ordinary", floor),
            ("headline", "ours: canonical+totalTokens", headline),
            ("ours", "ours: count_tools (total+per-tool)", ours),
            ("naive", "context: naive per-tool", naive_per_tool))
    wall: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for _, _, fn in runs:
        fn()  # warm-up
    for _ in range(args.reps):
        for name, _, fn in runs:  # interleaved, so load changes hit all three alike
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    size = sum(len(_dumps(c).encode()) for c in captures)
    print(f"{len(captures)} published captures, {size / 1e6:.2f} MB canonical, {args.reps} reps, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, "
          f"threads={counting._pool_size()}; o200k_base from {prov.source}")
    for name, label, _ in runs:
        print(f"  {label:36s} wall best {min(wall[name]) * 1e3:7.1f} ms"
              f"  median {statistics.median(wall[name]) * 1e3:7.1f} ms"
              f"   cpu best {min(cpu[name]) * 1e3:7.1f} ms")
    # Single-threaded, process CPU time is the work itself and ignores other load on the machine;
    # with threads it sums them, so wall time is the fair measure then.
    threaded = counting._pool_size() > 1
    for name, what in (("headline", "canonical+totalTokens (like for like)"),
                       ("ours", "count_tools incl. per-tool diagnostics")):
        best = min(wall[name]) / min(wall["floor"])
        med = statistics.median(wall[name]) / statistics.median(wall["floor"])
        cpu_ratio = min(cpu[name]) / min(cpu["floor"])
        judged, basis = (best, "wall") if threaded else (cpu_ratio, "cpu")
        verdict = "ok" if judged <= 1.5 else "ABOVE TARGET"
        print(f"  {what}/floor: wall best {best:.2f}x  median {med:.2f}x  cpu {cpu_ratio:.2f}x"
              f"  (target <= 1.5x, judged on {basis}: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
