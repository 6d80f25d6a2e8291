"""Benchmark: ``regen`` over synthetic repositories of 100, 300 and 1,000 catalog entries, each with
156 weekly history rows (three years), and the growth ratio from 100 to 1,000.

Each synthetic entry has a record (about 80% measured or dynamic with 12 tools and, for a third of
them, server instructions; the rest spread over the failure statuses) and a history whose
isolation switches from docker to host half-way, with the oldest rows not recorded. Timed: a cold
``regen`` (no published files yet) and a warm one (everything already up to date). Target: linear
growth, under 10 s at 1,000 entries and under a minute at 5,000. CPU seconds include the worker
processes that convert pages.

Baselines, measured in the same run, alternating with the full regen (``--baseline``): ``tables``
(default) converts the server pages with markdown-it's own table rule, the converter before the
direct table rule (same bytes); ``history`` switches the history pass (tool vectors, cost movement,
capture index) off. The worst case is modelled: every entry's cost moves every week, so
each ``tool-vectors.json`` holds the full bound of vectors (12 tools each) and every entry has a
per-tool breakdown; the cold run also appends one vector per measured entry (re-deriving its capture).

Each server page's HTML is converted once per content (``harness.pages.server_html``), each record
re-derived once per content and each server's page, HTML and chart drawn once per input
(``harness.pages.regen_cache``): "cold" starts with those caches empty; "warm" is a second run with nothing
changed; "one change" is a run after one server got a new history row (its page, the leaderboard and the
dashboard change), which should cost about what "warm" does — work proportional to what changed; "clone" is a
run with the caches emptied again but every published file in place and up to date, as in a fresh clone of the
repository in CI (the cold run also creates every published file, which costs most of its system time on a disk
where creating a file is slow). Before each cold run the published files of the last run are moved aside, not
deleted: deleting them there would slow the cold run's file creation, which a real first publish never meets.

``--before DIR`` (another checkout with its own ``.venv``, e.g. ``/work/main``) is the baseline instead: each
variant's three runs go in a child process of its own tree's code, the two trees alternating.

Run: ``.venv/bin/python bench/regen.py [--sizes 100,300,1000] [--reps 3] [--build-dir DIR] [--baseline tables]
[--before DIR]`` (``--build-dir``: keep the synthetic repositories there and reuse them on the next run; building
5,000 entries takes minutes).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE_VARIABLE = "REGEN_BENCH_TREE"  # a child's tree: its harness is the one timed
sys.path.insert(0, os.environ.get(TREE_VARIABLE) or str(ROOT))

import yaml  # noqa: E402

from harness.core import tokenizer  # noqa: E402
from harness.core.counting import count_tools  # noqa: E402
from harness.db.history import row_for  # noqa: E402
from harness.probe.build_record import serialize  # noqa: E402
from harness.pages import regen as regen_module  # noqa: E402
from harness.pages import regen_cache, server_html, tool_vectors  # noqa: E402
from harness.pages.regen import regen  # noqa: E402

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
        record = _record(rnd, name, status, i)
        (root / "results" / name).mkdir(parents=True)
        (root / "results" / name / "measurement.json").write_text(serialize(record), encoding="utf-8")
        tokens, vectors = rnd.randint(200, 40_000), []
        for week in range(WEEKS):
            day = (start + dt.timedelta(weeks=week)).isoformat()
            iso = "" if week < 20 else ("docker" if week < WEEKS // 2 else "host")
            if rnd.random() < 0.03 and week < WEEKS - 1:
                history.append(f"{day},{name},,,timeout,{iso}")
                continue
            tokens = max(1, tokens + rnd.randint(-50, 60))
            if week == WEEKS - 1:  # the newest row is the current record (its vector is appended)
                row = row_for(day, record)
                history.append(f"{day},{name},{_cell(row['tokens'])},{_cell(row['toolCount'])},{row['status']},{iso}")
                continue
            vectors.append(_vector(rnd, name, day, tokens, iso or None))
            history.append(f"{day},{name},{tokens},12,measured,{iso}")
        _write_vectors(root, name, vectors[-tool_vectors.MAX_VECTORS:])
    (root / "history.csv").write_text("\n".join(history) + "\n", encoding="utf-8")


def _cell(value: int | None) -> str:
    return "" if value is None else str(value)


def _vector(rnd: random.Random, name: str, day: str, tokens: int, iso: str | None) -> dict:
    sha = hashlib.sha256(f"{name}/{day}".encode()).hexdigest()
    tools = [[f"tool_{k}", rnd.randint(20, 400), rnd.randint(5, 120), rnd.randint(10, 200)] for k in range(12)]
    return {"date": day, "canonicalSha256": sha, "isolation": iso, "status": "measured", "totalTokens": tokens,
            "toolCount": 12, "tools": tools}


def _write_vectors(root: Path, name: str, vectors: list[dict]) -> None:
    lines = [json.dumps(v, separators=(",", ":")) for v in vectors]
    (root / "results" / name / "tool-vectors.json").write_text(tool_vectors.file_text(name, lines), encoding="utf-8")


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
    tools = [{"name": f"tool_{k}", "description": f"Does thing {k} with the service. " * (1 + (i + k) % 9),
              "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}} for k in range(12)]
    counts = count_tools(tools).to_json()  # a consistent record: its capture re-derives its numbers
    record |= {key: counts[key] for key in ("totalTokens", "toolCount", "canonicalSha256", "canonicalLength")}
    record |= {"rawToolsCapture": tools,
               "tools": [{k: t[k] for k in ("name", "tokens", "descriptionTokens", "inputSchemaTokens")}
                         for t in counts["tools"]]}
    return record


@contextlib.contextmanager
def without_history():
    """regen without the history pass (what regen cost before it)."""
    real = regen_module._history
    regen_module._history = lambda *args, **kwargs: {}
    try:
        yield
    finally:
        regen_module._history = real


@contextlib.contextmanager
def markdown_it_tables():
    """regen converting server pages with markdown-it's own table rule (the previous converter;
    same bytes, the page cache is emptied between runs)."""
    real = server_html._MD
    server_html._MD = server_html._markdown(direct_tables=False)
    try:
        yield
    finally:
        server_html._MD = real


BASELINES = {"tables": markdown_it_tables, "history": without_history, "none": None}


GENERATED = ("docs", "results/leaderboard.md", "results/leaderboard.csv", "results/regressions.md",
             "results/regressions.json", "results/capture-index.json", "results/tool-shape.json")


def _reset(root: Path, vectors: dict[Path, bytes], history: bytes) -> None:
    """Back to the state as built: no published pages, no converted pages, record or tool-vectors verdicts
    cached, the vectors before this run's appends, the history as built. The published files are moved aside
    (:func:`_set_aside`), not deleted: see there."""
    _empty_caches(root)
    (root / "history.csv").write_bytes(history)
    for folder in GENERATED:
        path = root / folder
        if path.exists():
            _set_aside(root, path)
    for path, data in vectors.items():
        path.write_bytes(data)


def _set_aside(root: Path, path: Path) -> None:
    """Move ``path`` into ``root``'s sibling trash folder, emptied by :func:`_empty_trash` once timing ends.
    Deleting thousands of files just before a cold run slows that run's file creation severalfold on ext4
    (its inode allocator skips the inodes just freed), which a real first publish never meets."""
    try:
        trash = _trash(root)
        trash.mkdir(exist_ok=True)
        path.rename(Path(tempfile.mkdtemp(dir=trash)) / path.name)
    except OSError:  # a parent folder not writable, or on another filesystem than the build: deleted after all
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _trash(root: Path) -> Path:
    return root.parent / f".{root.name}-set-aside"


def _empty_trash(root: Path) -> None:
    shutil.rmtree(_trash(root), ignore_errors=True)


def _empty_caches(root: Path) -> None:
    for kind in CACHE_KINDS:
        shutil.rmtree(regen_cache.folder(root, kind), ignore_errors=True)


def _clock() -> tuple[float, float]:
    """(wall s, CPU s) — the CPU of this process and of the ended worker processes that converted pages."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), time.process_time() + children.ru_utime + children.ru_stime


def _since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def _one_change(root: Path) -> None:
    """One server swept again a week after the last row: a new history row."""
    with (root / "history.csv").open("a", encoding="utf-8") as fh:
        fh.write("2026-12-07,server-0001,999,12,measured,host\n")


RUNS = ("cold", "warm", "one change", "clone")
CACHE_KINDS = ("html", "records", "pages", "catalog", "index", "history", "vectors")


def timed(root: Path, reps: int, baseline=markdown_it_tables, before: Path | None = None) -> dict[str, tuple[float, float]]:
    """Median of ``reps`` (wall s, CPU s) for regen on ``root``, baseline and full alternating so a
    busy machine slows both alike: ``{"base cold", "base warm", "base one change", "cold", …}``.
    Cold starts from no published pages, an empty page cache and the vectors as built (so the
    current record's vector is appended). The order of the variants flips at each rep. ``before``: the
    baseline is that checkout's code, and both variants run in child processes (:func:`_child_runs`)."""
    vectors = {p: p.read_bytes() for p in (root / "results").glob("*/tool-vectors.json")}
    history = (root / "history.csv").read_bytes()
    runs: dict[str, list[tuple[float, float]]] = {}
    variants = ((("base ", baseline),) if baseline is not None else ()) + (("", contextlib.nullcontext),)
    trees = {"base ": before, "": ROOT} if before is not None else {}
    try:
        for rep in range(reps):
            order = list(variants) if before is None else [(label, None) for label in trees]
            for label, context in order if rep % 2 == 0 else order[::-1]:  # neither always runs first
                _reset(root, vectors, history)
                if context is None:
                    times = _child_runs(trees[label], root)
                else:
                    with context():
                        times = _runs(root)
                for run, got in zip(RUNS, times):
                    runs.setdefault(label + run, []).append(got)
    finally:  # also when interrupted: a kept --build-dir stays as built
        _reset(root, vectors, history)
        _empty_trash(root)
    return {label: (statistics.median(w for w, _ in times), statistics.median(c for _, c in times))
            for label, times in runs.items()}


def _runs(root: Path) -> list[tuple[float, float]]:
    """(wall s, CPU s) of a cold, a warm, a one-change and a clone regen of ``root`` in this process."""
    times = []
    for run in RUNS:
        if run == "one change":
            _one_change(root)
        elif run == "clone":
            _empty_caches(root)
        start = _clock()
        regen(root)
        times.append(_since(start))
    return times


def _child_runs(tree: Path, root: Path) -> list[tuple[float, float]]:
    """:func:`_runs` in a child process running ``tree``'s code with its own ``.venv``."""
    done = subprocess.run([str(tree / ".venv" / "bin" / "python"), __file__, "--child", str(root)], check=True,
                          stdout=subprocess.PIPE, text=True, env={**os.environ, TREE_VARIABLE: str(tree)})
    return [tuple(pair) for pair in json.loads(done.stdout.splitlines()[-1])]


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        tokenizer.provision()
        print(json.dumps(_runs(Path(sys.argv[2]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,300,1000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--build-dir", help="keep the synthetic repositories here (DIR/<size>) and reuse them")
    ap.add_argument("--baseline", choices=sorted(BASELINES), default="tables",
                    help="tables: server pages converted by markdown-it's own table rule; history: no history pass; "
                         "none: no baseline (only to save time at large sizes)")
    ap.add_argument("--before", type=Path, help="another checkout with its own .venv (e.g. /work/main): the baseline")
    args = ap.parse_args()
    tokenizer.provision()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    print(f"{'entries':>8} {'history rows':>13} {'run':>10} {'baseline wall s':>16} {'wall s':>8} {'x':>6} "
          f"{'baseline CPU s':>15} {'CPU s':>7} {'x':>6}")
    for n in sizes:
        with contextlib.ExitStack() as stack:
            if args.build_dir:
                root = Path(args.build_dir) / str(n)
                if not (root / "history.csv").is_file():
                    root.mkdir(parents=True, exist_ok=True)
                    build(root, n)
            else:
                root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"regen-bench-{n}-")))
                build(root, n)
            got = timed(root, args.reps, BASELINES[args.baseline], args.before.resolve() if args.before else None)
            results[n] = got["cold"]
            for run in RUNS:
                (bw, bc), (w, c) = got.get(f"base {run}", (float("nan"),) * 2), got[run]
                print(f"{n:>8} {n * WEEKS:>13} {run:>10} {bw:>16.2f} {w:>8.2f} {w / bw:>6.2f} {bc:>15.2f} {c:>7.2f} "
                      f"{c / bc:>6.2f}", flush=True)
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        print(f"growth {lo} -> {hi}: x{results[hi][0] / results[lo][0]:.2f} wall, x{results[hi][1] / results[lo][1]:.2f} "
              f"CPU for x{hi / lo:.0f} entries (linear = x{hi / lo:.0f}); {hi} entries cold: {results[hi][0]:.2f} s wall, "
              f"{results[hi][1]:.2f} CPU-s (target < 10 s at 1,000, < 60 s at 5,000)")
    notes = {"tables": "x: regen against the same regen converting server pages with markdown-it's own table rule, "
                       "same run (medians of --reps)",
             "none": "no baseline run (--baseline none)",
             "history": "x: regen with the history pass against regen without it, same run (target < 2; medians of --reps)"}
    print("x: regen against the checkout at --before, same run, alternating (medians of --reps)" if args.before
          else notes[args.baseline])
    return 0


if __name__ == "__main__":
    sys.exit(main())
