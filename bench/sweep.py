"""Benchmark: a whole sweep, sequential against concurrent, and the harness's overhead per server.

The set: real servers pinned to exact releases (npm and PyPI; their packages should already be in
the cache — this measures sweeping, not downloading) plus fixture servers that take a realistic
second to answer ``initialize`` (``tests/fixtures/servers/slow_start.py --delay 1``), 13 entries
by default. Everything runs in one sitting, on throwaway git repositories under a temp dir.

1. Speed-up. ``mcp-context-cost sweep --all --commit`` as a subprocess, once with
   ``--concurrency 1`` and once with the default concurrency, each on a fresh clone of the same
   repository (so both publish and commit everything). A warm-up sweep runs first, untimed.
   Target: at least 2.5x on 2 cores for 12+ servers.

2. Overhead. For each server, interleaved: a *bare* launch-and-list — spawn, write the
   ``initialize``, ``notifications/initialized`` and ``tools/list`` lines, read the replies, kill
   the process group; no retries, no confirmation, no counting — against the harness's own
   ``measure()`` + ``record.build()`` of the same server. The bare loop launches exactly what the
   harness launches: the same argv under the same isolation (bubblewrap where the sweep would use
   it), the same minimal environment, a fresh working directory prepared the same way. The harness
   launches every server twice by design (an independent confirmation launch, methodology
   "Failure taxonomy"), so overhead is printed both per launch (harness wall time per launch
   against a bare launch; target at most 10%) and per measurement (against one bare launch, and
   against the two bare launches the design calls for).

3. Sandbox cost (``--sandbox-cost``). For each server, interleaved: a bare
   launch-and-list on the host (no sandbox), the same under the sandbox as it was before cache
   isolation (one package cache shared by every server, the entry's environment given to ``bwrap``
   itself, no capability drop, no secret masks), and under today's sandbox (a package cache of
   the server's own, ``--clearenv``/``--setenv`` through ``--args``, ``--cap-drop ALL``, masks).
   Each server's caches are warmed first (untimed). Printed: each sandbox's per-launch overhead
   over the bare host launch (target: at most 10%), and whether both sandboxes listed the same
   canonical tool set (canonicalSha256) — the cache layout must not change what a server says.

4. CPU per server in a warm sweep against two bare launches, with and without resolve-once
   (``--cpu``), and 5. catalog wall time cold and warm, with and without resolve-once (``--wall``):
   ``bench/sweep_cpu.py`` says how each is taken.

Run: ``.venv/bin/python bench/sweep.py [--fixtures 6] [--delay 1] [--reps 2] [--no-real]``;
``.venv/bin/python bench/sweep.py --sandbox-cost [--reps 3] [--fixtures 2]`` for part 3 alone;
``.venv/bin/python bench/sweep.py --cpu [--servers 16] [--reps 3]`` for part 4 alone;
``.venv/bin/python bench/sweep.py --wall [--servers 8 | --full]`` for part 5 alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from harness.db.catalog import load_catalog  # noqa: E402
from harness.db.sweep import default_concurrency  # noqa: E402
from harness.db.targets import target_for  # noqa: E402
from harness.core.counting import count_tools  # noqa: E402
from harness.core.jsparse import parse  # noqa: E402
from harness.probe import server_env, isolation, build_record as record, sandbox  # noqa: E402
from harness.probe.launch import isolated_argv  # noqa: E402
from harness.probe.measure import measure  # noqa: E402
from harness.probe.process import split_command  # noqa: E402
from harness.probe.session import initialize_request  # noqa: E402
from harness.probe.workdir import launch_dir  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "servers"
# The fixture servers run under the sandbox only because the bench (the one running the harness)
# shows their folder; a catalog's command alone shows nothing.
os.environ[sandbox.SHOWN_VARIABLE] = str(FIXTURES)
UVX = 'uvx --with "mcp<2" '
REAL = [  # pinned exactly, as in tests/probe/test_real_servers.py
    {"name": "memory", "command": "npx -y @modelcontextprotocol/server-memory@2026.8.31"},
    {"name": "filesystem", "command": "npx -y @modelcontextprotocol/server-filesystem@2026.7.10 /tmp"},
    {"name": "sequential-thinking", "command": "npx -y @modelcontextprotocol/server-sequential-thinking@2026.7.4"},
    {"name": "everything", "command": "npx -y @modelcontextprotocol/server-everything@2026.8.18"},
    {"name": "time", "command": UVX + "mcp-server-time==2026.8.18"},
    {"name": "fetch", "command": UVX + "mcp-server-fetch==2026.8.18"},
    {"name": "git", "command": UVX + "mcp-server-git==2026.8.18", "needsGit": True},
]
BARE_TIMEOUT = 120.0


def catalog(fixtures: int, delay: float, real: bool) -> str:
    servers = [dict(e, timeoutSeconds=120) for e in REAL] if real else []
    for i in range(fixtures):
        servers.append({"name": f"slow-{i + 1:02d}",
                        "command": shlex.join(["python3", str(FIXTURES / "slow_start.py"), "--delay", f"{delay:g}"])})
    return yaml.safe_dump({"servers": servers}, sort_keys=False, width=1000)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(path: Path, text: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "bench")
    git(path, "config", "user.email", "bench@example.invalid")
    (path / "servers.yaml").write_text(text, encoding="utf-8")
    git(path, "add", "servers.yaml")
    git(path, "commit", "-q", "-m", "catalog")
    return path


def timed_sweep(base: Path, work: Path, label: str, concurrency: int, mode: str) -> tuple[float, dict[str, str]]:
    """Clone ``base`` to ``work/label`` and sweep it as a subprocess; (wall seconds, statuses)."""
    repo = work / label
    git(work, "clone", "-q", str(base), str(repo))
    argv = [sys.executable, "-m", "harness.cli", "sweep", "--root", str(repo), "--all", "--commit",
            "--concurrency", str(concurrency), "--isolation", mode]
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"sweep ({label}) exited {done.returncode}:\n{done.stderr[-3000:]}")
    statuses = {}
    for path in sorted((repo / "results").glob("*/measurement.json")):
        statuses[path.parent.name] = json.loads(path.read_text())["status"]
    return wall, statuses


# --- the bare loop -------------------------------------------------------------------------------

def bare_launch(target, mode: str, variant: str = "now", gentle: bool = False) -> tuple[float, list]:
    """Spawn, initialize, initialized, tools/list (following nextCursor), kill: (seconds, tools).
    The argv, environment and inherited descriptors are the harness's own (``isolated_argv``);
    ``variant="before"`` turns a sandbox launch back into the one before cache isolation.
    ``gentle``: end it by closing stdin and waiting (up to 5 s) before the kill, so every process
    is reaped by its parent and its CPU is counted (``bench/sweep_cpu.py``)."""
    t0 = time.perf_counter()
    with launch_dir(target.name, target.needs_git) as cwd:  # the harness's own working directory
        env = server_env.child_env(target.env, pass_declared_values=False)
        env.update(target.set_env)
        argv, launcher_env, fds = isolated_argv(split_command(target.command), env, cwd, mode, target)
        if mode == "sandbox" and variant == "before":
            argv, launcher_env, fds = before_cache_isolation(argv, env, fds)
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    env=launcher_env, cwd=cwd, start_new_session=True, pass_fds=fds)
        finally:
            for fd in fds:
                os.close(fd)
        deadline = time.monotonic() + BARE_TIMEOUT
        try:
            send(proc, initialize_request("2025-11-25"))
            reply(proc, 1, deadline)
            send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools, cursor, request = [], None, 2
            while True:
                send(proc, {"jsonrpc": "2.0", "id": request, "method": "tools/list",
                            "params": {"cursor": cursor} if cursor else {}})
                result = reply(proc, request, deadline)
                tools += result.get("tools") or []
                cursor = result.get("nextCursor")
                if not cursor:
                    break
                request += 1
        finally:
            if gentle:
                proc.stdin.close()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            if not proc.stdin.closed:
                proc.stdin.close()
            proc.stdout.close()
    return time.perf_counter() - t0, tools


def before_cache_isolation(argv: list[str], env: dict, fds: tuple) -> tuple[list[str], dict, tuple]:
    """Today's bwrap argv turned back into the older, shared-cache sandbox: one cache for all
    (``cache_root()/npm``, ``/uv``), the environment given to bwrap itself instead of ``--args``,
    no ``--cap-drop ALL``, no secret masks."""
    shared = sandbox.cache_root()
    for sub in ("npm", "uv"):
        (shared / sub).mkdir(parents=True, exist_ok=True)
    masks = sandbox.secret_masks()
    out, i = [argv[0]], 1
    while i < len(argv):
        if argv[i] == "--":
            out += argv[i:]
            break
        if argv[i] == "--args" or argv[i] == "--cap-drop":
            i += 2
            continue
        if argv[i] in ("--ro-bind", "--tmpfs") and argv[i:i + len(_mask_at(masks, argv, i))] == _mask_at(masks, argv, i):
            i += len(_mask_at(masks, argv, i))
            continue
        if argv[i] == "--bind" and argv[i + 2] in (f"{sandbox.SANDBOX_HOME}/.npm", f"{sandbox.SANDBOX_HOME}/.cache/uv"):
            out += ["--bind", str(shared / ("npm" if argv[i + 2].endswith(".npm") else "uv")), argv[i + 2]]
            i += 3
            continue
        out.append(argv[i])
        i += 1
    for fd in fds:
        os.close(fd)
    inner = dict(env, HOME=sandbox.SANDBOX_HOME, TMPDIR="/tmp", PATH=sandbox.sandbox_path(env.get("PATH", "")))
    return out, inner, ()


def _mask_at(masks: list[str], argv: list[str], i: int) -> list[str]:
    """The secret-mask group (``--ro-bind /dev/null F`` or ``--tmpfs D --remount-ro D``) at ``argv[i]``."""
    for j in range(0, len(masks)):
        size = 3 if masks[j] == "--ro-bind" else 4 if masks[j] == "--tmpfs" else 0
        if size and masks[j:j + size] == argv[i:i + size]:
            return masks[j:j + size]
    return [None]


def send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write((json.dumps(message, separators=(",", ":")) + "\n").encode())
    proc.stdin.flush()


def reply(proc: subprocess.Popen, request_id: int, deadline: float) -> dict:
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server closed stdout")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
            if "result" not in message:
                raise RuntimeError(f"error reply: {message.get('error')}")
            return message["result"]
    raise RuntimeError("bare launch timed out")


# --- the harness, per server ---------------------------------------------------------------------

def harness_measure(target, mode: str) -> tuple[float, float, int, str]:
    """``measure()`` then ``record.build()``, as a sweep does; (seconds measuring, seconds with the
    record built, launches, status)."""
    iso = isolation.describe(mode)
    t0 = time.perf_counter()
    m = asyncio.run(measure(target, isolation=mode, pass_declared_values=False))
    t1 = time.perf_counter()
    record.build(m, iso)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t0, len(m.attempts), m.status


def overhead(base: Path, mode: str, reps: int) -> list[dict]:
    from harness.core import tokenizer

    tokenizer.count("warm up")  # the encoding loads once per process; a sweep pays that in its fixed cost
    rows = []
    for entry in load_catalog(base / "servers.yaml").entries:
        target = target_for(entry)
        bare, launches, measurement, status, tools = [], [], [], "", []
        bare_launch(target, mode)  # warm this server's page cache alike for both
        for _ in range(reps):  # interleaved: bare, harness, bare — load drift hits both alike
            seconds, tools = bare_launch(target, mode)
            bare.append(seconds)
            measuring, with_record, n, status = harness_measure(target, mode)
            launches.append(measuring / n)
            measurement.append(with_record)
            seconds, _ = bare_launch(target, mode)
            bare.append(seconds)
        rows.append({"name": entry.name, "status": status, "tools": len(tools), "bare": statistics.median(bare),
                     "launch": statistics.median(launches), "measurement": statistics.median(measurement)})
        r = rows[-1]
        print(f"  {r['name']:22s} {r['status']:10s} {r['tools']:3d} tools  bare {r['bare']:6.2f}s  "
              f"harness/launch {r['launch']:6.2f}s ({pct(r['launch'], r['bare'])})  "
              f"measurement {r['measurement']:6.2f}s ({pct(r['measurement'], r['bare'])} vs 1 bare, "
              f"{pct(r['measurement'], 2 * r['bare'])} vs 2 bare)", flush=True)
    return rows


def pct(value: float, base: float) -> str:
    return f"{(value / base - 1) * 100:+.0f}%"


def sandbox_cost(entries: list, reps: int) -> None:
    """Part 3: bare host launch vs the sandbox before and after cache isolation (see module doc)."""
    variants = (("host", "host", "now"), ("before", "sandbox", "before"), ("after", "sandbox", "now"))
    totals = dict.fromkeys((v[0] for v in variants), 0.0)
    same = True
    print(f"per-launch time, medians of {reps} interleaved launches each (caches warmed first, untimed):", flush=True)
    for entry in entries:
        target = target_for(entry)
        times: dict[str, list[float]] = {label: [] for label, _, _ in variants}
        hashes: dict[str, str] = {}
        for label, mode, variant in variants:
            bare_launch(target, mode, variant)  # warm: package cache and page cache
        for _ in range(reps):
            for label, mode, variant in variants:
                seconds, tools = bare_launch(target, mode, variant)
                times[label].append(seconds)
                # Through JSON text and JSON.parse semantics, as the harness reads a reply.
                hashes.setdefault(label, count_tools(parse(json.dumps(tools))).canonicalSha256)
        medians = {label: statistics.median(values) for label, values in times.items()}
        for label in totals:
            totals[label] += medians[label]
        agree = hashes["before"] == hashes["after"]
        same &= agree
        print(f"  {entry.name:22s} host {medians['host']:6.2f}s  sandbox before {medians['before']:6.2f}s "
              f"({pct(medians['before'], medians['host'])})  after {medians['after']:6.2f}s "
              f"({pct(medians['after'], medians['host'])})  canonicalSha256 {hashes['after'][:12]} "
              f"{'same' if agree else 'DIFFERS from ' + hashes['before'][:12]}", flush=True)
    for label in ("before", "after"):
        over = totals[label] / totals["host"] - 1
        print(f"sandbox {label:6s} cache isolation: {totals[label]:.1f}s over {len(entries)} servers vs "
              f"{totals['host']:.1f}s bare on the host: {over * 100:+.1f}% per launch "
              f"(target <= +10%: {'ok' if over <= 0.10 else 'ABOVE TARGET'})")
    print(f"after vs before: {(totals['after'] / totals['before'] - 1) * 100:+.1f}%; canonical tool sets "
          f"{'identical for every server' if same else 'NOT identical'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", type=int, default=6, help="slow_start fixture servers (default 6)")
    ap.add_argument("--delay", type=float, default=1.0, help="their initialize delay, seconds (default 1)")
    ap.add_argument("--no-real", action="store_true", help="fixture servers only (no npm/PyPI packages)")
    ap.add_argument("--reps", type=int, default=1, help="harness measurements per server for the overhead")
    ap.add_argument("--concurrency", type=int, default=default_concurrency(), help="the concurrent run's setting")
    ap.add_argument("--isolation", default="auto", choices=("auto", "host", "sandbox"))
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--sandbox-cost", action="store_true", help="only part 3: the sandbox before/after cache isolation")
    ap.add_argument("--cpu", action="store_true", help="only part 4: sweep CPU per server vs two bare launches")
    ap.add_argument("--wall", action="store_true", help="only part 5: catalog wall time, cold and warm")
    ap.add_argument("--servers", type=int, default=None, help="parts 4/5: this many catalog servers (16 / 8)")
    ap.add_argument("--full", action="store_true", help="part 5: the whole catalog")
    args = ap.parse_args()
    mode = isolation.resolve_mode(args.isolation)
    if args.cpu or args.wall:
        import sweep_cpu

        print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at start", flush=True)
        if args.cpu:
            sweep_cpu.cpu_part(args.servers or 16, mode, max(args.reps, 1), args.concurrency, bare_launch)
        if args.wall:
            sweep_cpu.wall_part(None if args.full else (args.servers or 8), mode, args.concurrency)
        print(f"load {os.getloadavg()[0]:.2f} at the end")
        return 0
    if args.sandbox_cost:
        with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
            path = Path(tmp) / "servers.yaml"
            path.write_text(catalog(args.fixtures, args.delay, not args.no_real), encoding="utf-8")
            print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at start", flush=True)
            sandbox_cost(list(load_catalog(path).entries), max(args.reps, 1))
            print(f"load {os.getloadavg()[0]:.2f} at the end")
        return 0

    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        work = Path(tmp)
        base = make_repo(work / "base", catalog(args.fixtures, args.delay, not args.no_real))
        n = len(load_catalog(base / "servers.yaml").entries)
        print(f"{n} servers ({0 if args.no_real else len(REAL)} real pinned, {args.fixtures} slow_start "
              f"--delay {args.delay:g}); isolation {mode}; {os.cpu_count()} CPUs, "
              f"load {os.getloadavg()[0]:.2f} at start", flush=True)

        warm, statuses = timed_sweep(base, work, "warmup", args.concurrency, mode)
        bad = {k: v for k, v in statuses.items() if v != "measured"}
        print(f"warm-up sweep (untimed for the ratio): {warm:.1f}s"
              + (f"; NOT measured: {bad}" if bad else "; every server measured"), flush=True)
        sequential, _ = timed_sweep(base, work, "sequential", 1, mode)
        print(f"sequential sweep  (--concurrency 1):  {sequential:6.1f}s", flush=True)
        concurrent, _ = timed_sweep(base, work, "concurrent", args.concurrency, mode)
        print(f"concurrent sweep  (--concurrency {args.concurrency}):  {concurrent:6.1f}s", flush=True)
        speedup = sequential / concurrent
        target = 2.5
        print(f"speed-up: {speedup:.2f}x  (target >= {target}x on 2 cores for 12+ servers: "
              f"{'ok' if speedup >= target else 'BELOW TARGET'}; load {os.getloadavg()[0]:.2f} now)", flush=True)

        if args.skip_overhead:
            return 0
        print(f"overhead per server, harness vs a bare launch-and-list of the same server "
              f"(medians, {args.reps} rep(s), {2 * args.reps + 1} bare launches each):", flush=True)
        rows = overhead(base, mode, args.reps)
        bare = sum(r["bare"] for r in rows)
        launch = sum(r["launch"] for r in rows)
        meas = sum(r["measurement"] for r in rows)
        per_launch = launch / bare - 1
        print(f"total over {len(rows)} servers: bare {bare:.1f}s; harness per launch {launch:.1f}s "
              f"({per_launch * 100:+.1f}%, target <= +10%: {'ok' if per_launch <= 0.10 else 'ABOVE TARGET'}); "
              f"per measurement {meas:.1f}s ({pct(meas, bare)} vs one bare launch — dual launch by design; "
              f"{pct(meas, 2 * bare)} vs two)")
        fixed = sequential - meas
        print(f"sweep fixed cost (sequential sweep minus the sum of measurements): {fixed:.1f}s "
              "(interpreter start, catalog, staging, guard, publish, regen, commit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
