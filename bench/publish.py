"""Benchmark: what the one publish path adds around ``regen``, on synthetic repositories
of 100 and 1,000 catalog entries with 156 weekly history rows each (``bench/regen.py``'s builder),
committed to a real git repository.

Timed, in one sitting, against the baseline (the ratios' denominator): one history row per server
added by hand, then ``regen`` — which rewrites every page, as after any sweep of a new date:

1. preconditions — ``publish.session(commit=True)`` entered and left: the repository lock, the
   temp-file sweep of the published folders, the scan for interrupted journals, the dirty-tree
   check (``git status`` over the published paths) and the history check;
2. a whole no-change re-sweep's publish — every record kept, one new history row per server —
   through the journal: badges compared, history staged, promoted, pages regenerated, the changed
   pages found with ``git status`` and committed by name.

Target: preconditions well under one regen; the whole publish — regen included once, plus staging,
the journal, git status and a commit naming every changed page — under 2x the baseline.

Run: ``.venv/bin/python bench/publish.py [--sizes 100,1000] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.cli.sweep_cmd import PAGES  # noqa: E402
from harness.core.jsparse import parse  # noqa: E402
from harness.db import history  # noqa: E402
from harness.db import publish  # noqa: E402
from harness.db.journal import Staging  # noqa: E402
from harness.pages.badge import badge_for, write_badge  # noqa: E402
from harness.pages.regen import regen  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_regen", ROOT / "bench" / "regen.py")
bench_regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_regen)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def repository(base: Path, n: int) -> Path:
    root = base / f"repo-{n}"
    root.mkdir()
    bench_regen.build(root, n)
    for name, rec in _records(root).items():  # the badges a sweep would have published with them
        tokens = rec["totalTokens"]
        write_badge(root / "badges" / f"{name}.json", badge_for(rec["status"], None if tokens is None else int(tokens)))
    regen(root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "-c", "user.name=b", "-c", "user.email=b@b", "add", "-A")
    _git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "synthetic")
    return root


def _records(root: Path) -> dict[str, dict]:
    return {p.parent.name: parse(p.read_text(encoding="utf-8")) for p in sorted((root / "results").glob("*/measurement.json"))}


def one_publish(root: Path, date: dt.date) -> float:
    records = _records(root)
    started = time.perf_counter()
    with publish.session(root, PAGES, commit=True, say=lambda line: None) as run:
        stage = Staging(root, f"bench-{date.isoformat()}")
        outcome = run.publish(stage, records, records, [], date, f"bench sweep {date.isoformat()}")
    elapsed = time.perf_counter() - started
    assert outcome.commit and not outcome.problems, outcome
    return elapsed


def preconditions(root: Path) -> float:
    started = time.perf_counter()
    with publish.session(root, PAGES, commit=True, say=lambda line: None):
        pass
    return time.perf_counter() - started


def plain_regen(root: Path, date: dt.date) -> float:
    """The baseline: one row per server added to history.csv by hand, then ``regen`` — which then
    rewrites every page, as after a real sweep. Reverted afterwards (untimed)."""
    records = _records(root)
    rows = [history.row_for(date.isoformat(), {**r, "totalTokens": _int(r["totalTokens"]),
                                               "toolCount": _int(r["toolCount"])}) for r in records.values()]
    history.write(root / "history.csv", history.merge(history.read(root / "history.csv"), rows))
    started = time.perf_counter()
    regen(root)
    elapsed = time.perf_counter() - started
    _git(root, "reset", "-q", "--hard")
    return elapsed


def _int(value):
    return int(value) if isinstance(value, float) else value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print(f"{'entries':>8} {'regen':>13} {'preconditions':>14} {'ratio':>6} {'publish':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            root = repository(Path(tmp), n)
            base, pre, pub = [], [], []
            day = dt.date(2030, 1, 7)
            for rep in range(args.reps):  # interleaved, so load on the machine hits all three alike
                base.append(plain_regen(root, day + dt.timedelta(weeks=rep, days=3)))
                pre.append(preconditions(root))
                pub.append(one_publish(root, day + dt.timedelta(weeks=rep)))
            b, p, q = (statistics.median(x) for x in (base, pre, pub))
            print(f"{n:>8} {b:>12.3f}s {p:>13.3f}s {p / b:>5.2f}x {q:>8.3f}s {q / b:>5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
