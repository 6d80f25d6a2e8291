"""Benchmark: one ``measure`` against the floor of a bare launch-and-list, and against the floor of
the TypeScript reference (two bare launches: it also launches twice; the reference itself is not
installed on this machine, so its floor stands in for it — a real reference is no faster than it).

The floor is a minimal client (this file, ``--bare``; stdlib only): it starts the server, sends
``initialize``, ``notifications/initialized`` and ``tools/list``, reads the reply, kills the
server's process group and exits. Timed in one sitting, interleaved round by round on real servers
from the catalog (pinned versions, ``--isolation host``; every cache warm: one untimed bare launch and one
untimed measure per tree first, each tree's bytecode compiled once into the sitting's own folder):

* **measure** — ``mcp-context-cost measure --command … --isolation host`` as a process (both
  launches, record and badge written), with this tree's code ("after") and, when ``--before`` names
  another checkout (e.g. ``/work/main``), with that tree's code and its own ``.venv`` ("before");
* **bare** — the floor, as a process; **bare x2** — two bare launches one after the other;
* **per launch** — inside one worker process per tree: the harness's own launch (``launch_once``)
  against the same bare launch done in-process, alternately.

Wall seconds and CPU seconds (user + system of every process a run started: this process is their
subreaper) are printed as medians with ``measure / bare`` and ``measure / bare x2``; CPU ratios hold
better than wall ones on a loaded machine. Targets: measure <= 1.6x bare and <= 0.8x the reference
(<= 0.8x bare x2), per launch <= 1.15x. Every capture must hash the same (canonicalSha256) in both trees.

Run: ``.venv/bin/python bench/measure.py [--rounds 5] [--before /work/main] [--servers memory,time]``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ctypes.util
import json
import os
import resource
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

    from harness.probe import launch, limits, teardown
    from harness.probe.target import Target

    target = Target(name="bench-launch", command=command, timeout_seconds=120)

    async def one_launch() -> float:
        started = time.perf_counter()
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

def become_subreaper() -> None:
    """Orphans of every process this one starts are re-parented here, so their CPU is counted."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def children_cpu() -> float:
    """CPU seconds (user + system) of every descendant reaped so far (orphans reaped first)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one process run to its end, its descendants included."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} exited {done.returncode}: {done.stdout[-400:]} {done.stderr[-400:]}")
    time.sleep(0.2)  # a killed server's last orphans exit
    return seconds, children_cpu() - cpu


def measure_argv(python: str, name: str, command: str, out: Path) -> list[str]:
    return [python, "-m", "harness.cli", "measure", "--command", command, "--name", f"bench-{name}", "--out", str(out),
            "--isolation", "host"]


def sha(out: Path, name: str) -> str:
    return json.loads((out / "results" / f"bench-{name}" / "measurement.json").read_text())["canonicalSha256"]


def bench_env(work: Path) -> dict:
    """Every process's environment: bytecode compiled once into the sitting's own folder (never into a tree, the
    other tree being read-only), as an installed package has it; each tree runs its own code."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(work / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)  # ``-m`` from its checkout
    return env


def warm(servers: list[str], trees: dict[str, Path], work: Path) -> None:
    """One untimed bare launch and one untimed measure per tree of every server: package caches, each tree's
    own caches and its bytecode are warm in every timed round."""
    env = bench_env(work)
    for name in servers:
        timed([sys.executable, __file__, "--bare", SERVERS[name]], ROOT, env)
        for label, tree in trees.items():
            timed(measure_argv(str(tree / ".venv" / "bin" / "python"), name, SERVERS[name], work / "warm" / label),
                  tree, env)


def sitting(servers: list[str], rounds: int, trees: dict[str, Path], work: Path) -> dict:
    env = bench_env(work)
    runs: dict[str, dict] = {name: {"bare": [], "bare x2": [], **{f"measure {t}": [] for t in trees},
                                    **{f"sha {t}": set() for t in trees}} for name in servers}
    for r in range(rounds):
        for name in servers:
            command, row = SERVERS[name], runs[name]
            row["bare"].append(timed([sys.executable, __file__, "--bare", command], ROOT, env))
            row["bare x2"].append(timed([sys.executable, __file__, "--bare2", command], ROOT, env))
            for label, tree in (trees.items() if r % 2 == 0 else reversed(trees.items())):
                out = work / label / f"{name}-{r}"
                python = str(tree / ".venv" / "bin" / "python")
                row[f"measure {label}"].append(timed(measure_argv(python, name, command, out), tree, env))
                row[f"sha {label}"].add(sha(out, name))
            print(f"  round {r + 1}/{rounds} {name}: " + ", ".join(
                f"{k} {v[-1][0]:.2f} s ({v[-1][1]:.2f} CPU-s)" for k, v in row.items() if not k.startswith("sha")),
                flush=True)
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
    print("\nmedians; targets: measure <= 1.6x bare and <= 0.8x bare x2 (the reference's floor), "
          "launch <= 1.15x bare launch")
    for name, row in runs.items():
        bare, bare2 = (med(w for w, _ in row["bare"]), med(c for _, c in row["bare"])), \
            (med(w for w, _ in row["bare x2"]), med(c for _, c in row["bare x2"]))
        print(f"{name}: bare {bare[0]:.2f} s, {bare[1]:.2f} CPU-s; bare x2 {bare2[0]:.2f} s, {bare2[1]:.2f} CPU-s")
        for label in trees:
            wall, cpu = med(w for w, _ in row[f"measure {label}"]), med(c for _, c in row[f"measure {label}"])
            launch, bare_in = med(row[f"launch {label}"]), med(row[f"bare launch {label}"])
            print(f"  {label:>6}: measure {wall:.2f} s = {wall / bare[0]:.2f}x bare, {wall / bare2[0]:.2f}x bare x2; "
                  f"{cpu:.2f} CPU-s = {cpu / bare[1]:.2f}x bare, {cpu / bare2[1]:.2f}x bare x2; one launch "
                  f"{launch:.2f} s vs bare {bare_in:.2f} s in-process = {launch / bare_in:.2f}x")
        hashes = set().union(*(row[f"sha {label}"] for label in trees))
        print(f"  canonicalSha256: {'identical in every run' if len(hashes) == 1 else 'DIFFERENT: ' + str(hashes)}")


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] in ("--bare", "--bare2"):
        for _ in range(2 if sys.argv[1] == "--bare2" else 1):
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
    become_subreaper()
    print(f"bench/measure.py: {args.rounds} rounds, servers {', '.join(servers)}; trees: "
          + ", ".join(f"{k}={v}" for k, v in trees.items()) + f"; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-measure-") as work:
        warm(servers, trees, Path(work))  # the figures are for warm launches
        report(sitting(servers, args.rounds, trees, Path(work)), trees)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
