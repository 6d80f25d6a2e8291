"""Benchmark: one ``measure`` against the floor of a bare launch-and-list (issue #16, acceptance).

The floor is a minimal client (this file, ``--bare``; stdlib only): it starts the server, sends
``initialize``, ``notifications/initialized`` and ``tools/list``, reads the reply, kills the
server's process group and exits — nothing a measurement needs beyond the listing. Timed in one
sitting, interleaved round by round on real servers from the catalog (pinned versions, warm caches,
``--isolation host``):

* **measure** — ``mcp-context-cost measure --command … --isolation host`` as a process (both
  launches, record and badge written), with this tree's code ("after") and, when ``--before`` names
  another checkout (e.g. ``/work/main``), with that tree's code and its own ``.venv`` ("before");
* **bare** — the floor, as a process;
* **per launch** — inside one worker process per tree: the harness's own launch
  (``launch_once``, until the capture is returned to the caller — teardown included where that
  tree's caller waits for it) against the same bare launch done in-process, alternately.

Printed per server: median walls, ``measure / bare`` and ``launch / bare launch``, for each tree,
and whether every capture hashed the same (canonicalSha256) in both trees. Targets (issue #16):
measure ≤ 1.6× bare, per launch ≤ 1.15×. The machine is shared: read the medians, not one run.

Run: ``.venv/bin/python bench/measure.py [--rounds 5] [--before /work/main] [--servers memory,time]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UVX = 'uvx --with "mcp<2" '
SERVERS = {  # catalog names (servers.yaml), pinned as in tests/probe/test_real_servers.py
    "memory": "npx -y @modelcontextprotocol/server-memory@2026.8.31",
    "everything": "npx -y @modelcontextprotocol/server-everything@2026.8.18",
    "sequential-thinking": "npx -y @modelcontextprotocol/server-sequential-thinking@2026.7.4",
    "time": UVX + "mcp-server-time==2026.8.18",
}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bare", "version": "0"}}}


# --- the floor ---------------------------------------------------------------------------------------

def bare_launch(command: str) -> int:
    """Start ``command``, initialize, initialized, tools/list (one page), kill it; the tool count."""
    env = dict(os.environ)  # the harness's child PATH also ends with its interpreter's folder (uv, uvx)
    env["PATH"] = env.get("PATH", "") + os.pathsep + os.path.dirname(sys.executable)
    argv = shlex.split(command)
    argv[0] = shutil.which(argv[0], path=env["PATH"]) or argv[0]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=tempfile.gettempdir(), env=env)
    try:
        _send(proc, INIT)
        _reply(proc, 1)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        return len(_reply(proc, 2)["result"]["tools"])
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            stream.close()


def _send(proc, message: dict) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _reply(proc, request_id: int) -> dict:
    for line in proc.stdout:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == request_id:
            return message
    raise RuntimeError(f"the server closed stdout before answering request {request_id}")


# --- the per-launch worker (runs under the tree being measured) --------------------------------------

def worker(tree: Path, command: str, reps: int) -> None:
    """Print ``{"launch": [...], "bare": [...]}``: seconds of ``launch_once`` and of a bare launch,
    alternately, in this process; imports ``harness`` from ``tree``."""
    sys.path.insert(0, str(tree))
    import asyncio

    from harness.probe import launch, limits
    from harness.probe.target import Target

    try:
        from harness.probe import teardown
    except ImportError:  # a tree from before issue #16: the launch tears down before it returns
        teardown = None

    target = Target(name="bench-launch", command=command, timeout_seconds=120)

    async def one_launch() -> float:
        started = time.perf_counter()
        if teardown is None:
            capture = await launch.launch_once(target, 120, limits.from_env(), "2025-11-25")
            seconds = time.perf_counter() - started
        else:
            async with teardown.scope():  # as measure's caller sees it: the capture, then teardown beside
                capture = await launch.launch_once(target, 120, limits.from_env(), "2025-11-25")
                seconds = time.perf_counter() - started
        assert capture.ok, capture.failure
        return seconds

    times = {"launch": [], "bare": []}
    for _ in range(reps):
        times["launch"].append(asyncio.run(one_launch()))
        started = time.perf_counter()
        bare_launch(command)
        times["bare"].append(time.perf_counter() - started)
    print(json.dumps(times))


# --- the sitting --------------------------------------------------------------------------------------

def timed(argv: list[str], cwd: Path, env: dict | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} exited {done.returncode}: {done.stdout[-400:]} {done.stderr[-400:]}")
    return seconds


def measure_argv(python: str, name: str, command: str, out: Path) -> list[str]:
    return [python, "-m", "harness.cli", "measure", "--command", command, "--name", f"bench-{name}", "--out", str(out),
            "--isolation", "host"]


def sha(out: Path, name: str) -> str:
    return json.loads((out / "results" / f"bench-{name}" / "measurement.json").read_text())["canonicalSha256"]


def sitting(servers: list[str], rounds: int, trees: dict[str, Path], work: Path) -> dict:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # the other tree is read-only
    runs = {name: {"bare": [], **{f"measure {t}": [] for t in trees}, **{f"sha {t}": set() for t in trees}}
            for name in servers}
    for r in range(rounds):
        for name in servers:
            command, row = SERVERS[name], runs[name]
            row["bare"].append(timed([sys.executable, __file__, "--bare", command], ROOT))
            for label, tree in (trees.items() if r % 2 == 0 else reversed(trees.items())):
                out = work / label / f"{name}-{r}"
                python = str(tree / ".venv" / "bin" / "python")
                row[f"measure {label}"].append(timed(measure_argv(python, name, command, out), tree, env))
                row[f"sha {label}"].add(sha(out, name))
            print(f"  round {r + 1}/{rounds} {name}: " + ", ".join(
                f"{k} {v[-1]:.2f} s" for k, v in row.items() if not k.startswith("sha")), flush=True)
    for name in servers:
        for label, tree in trees.items():
            python = str(tree / ".venv" / "bin" / "python")
            done = subprocess.run([python, __file__, "--worker", str(tree), SERVERS[name], str(rounds)], cwd=tree,
                                  env=env, capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                raise RuntimeError(f"worker {label} {name}: {done.stderr[-600:]}")
            per = json.loads(done.stdout.strip().splitlines()[-1])
            runs[name][f"launch {label}"], runs[name][f"bare launch {label}"] = per["launch"], per["bare"]
    return runs


def report(runs: dict, trees: dict[str, Path]) -> None:
    med = statistics.median
    print("\nmedians (seconds) and ratios; targets: measure/bare <= 1.6, launch/bare launch <= 1.15")
    for name, row in runs.items():
        bare = med(row["bare"])
        print(f"{name}: bare launch-and-list (process) {bare:.2f} s")
        for label in trees:
            m = med(row[f"measure {label}"])
            launch, bare_in = med(row[f"launch {label}"]), med(row[f"bare launch {label}"])
            print(f"  {label:>6}: measure {m:.2f} s = {m / bare:.2f}x bare; one launch {launch:.2f} s vs bare "
                  f"{bare_in:.2f} s in-process = {launch / bare_in:.2f}x")
        hashes = set().union(*(row[f"sha {label}"] for label in trees))
        print(f"  canonicalSha256: {'identical in every run' if len(hashes) == 1 else 'DIFFERENT: ' + str(hashes)}")


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--bare":
        print(bare_launch(sys.argv[2]))
        return 0
    if len(sys.argv) > 4 and sys.argv[1] == "--worker":
        worker(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--servers", default=",".join(SERVERS), help=f"comma-separated, of {', '.join(SERVERS)}")
    ap.add_argument("--before", type=Path, help="another checkout with its own .venv (e.g. /work/main): 'before'")
    args = ap.parse_args()
    servers = [s for s in args.servers.split(",") if s]
    unknown = [s for s in servers if s not in SERVERS]
    if unknown:
        ap.error(f"unknown server(s): {', '.join(unknown)}")
    trees = {"after": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    print(f"bench/measure.py: {args.rounds} rounds, servers {', '.join(servers)}; trees: "
          + ", ".join(f"{k}={v}" for k, v in trees.items()), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-measure-") as work:
        for name in servers:  # warm every cache first: the figures are for warm launches
            bare_launch(SERVERS[name])
        report(sitting(servers, args.rounds, trees, Path(work)), trees)
    return 0


if __name__ == "__main__":
    sys.exit(main())
