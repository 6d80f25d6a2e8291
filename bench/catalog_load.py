"""Benchmark: a cold ``load_catalog`` (no kept catalog, a fresh process) of the given ``servers.yaml`` files,
this checkout against another (``--before DIR``, e.g. ``/work/main``), alternating, and the ratio of
the medians. Timed: the CPU seconds of the call alone (the interpreter's start and imports are not), and
then, in the same process, of its YAML part alone (``yamlsafe.compose`` and ``construct``).

Run: ``.venv/bin/python bench/catalog_load.py --before DIR [--reps 5] CATALOG...`` (``DIR``: another checkout with its own ``.venv``)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from harness.db import catalog
from harness.util import yamlsafe
started = time.process_time()
catalog.load_catalog(sys.argv[2])
loaded = time.process_time()
root, loader = yamlsafe.compose(yamlsafe.read_text(sys.argv[2]), catalog.BOUNDS)
yamlsafe.construct(loader, root)
print(json.dumps({"load": loaded - started, "yaml": time.process_time() - loaded}))
"""


def once(tree: Path, path: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(tree), path], capture_output=True, text=True,
                         check=True, cwd="/")  # "/": the tree is found through sys.path only
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalogs", nargs="+")
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare against")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    for path in args.catalogs:
        runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for _ in range(args.reps):
            runs["before"].append(once(args.before, path))
            runs["after"].append(once(HERE, path))
        for part in ("load", "yaml"):
            before, after = (statistics.median(run[part] for run in runs[side]) for side in ("before", "after"))
            print(f"{path} {part}: before {before:.3f} s, after {after:.3f} s CPU (medians of {args.reps}), "
                  f"before/after {before / after:.2f}x")


if __name__ == "__main__":
    main()
