"""Sweep CPU and catalog wall time, with and without resolve-once (parts 4 and 5 of
``bench/sweep.py``, which calls this module).

4. CPU per server (``--cpu``). A set of catalog servers whose bare launch-and-list works here (the
   first ``--servers`` stdio entries that answer; 16 by default), warmed first. For each server the
   CPU of one *bare* launch-and-list (``bench/sweep.py``'s ``bare_launch``: the harness's own argv,
   environment and isolation; no retries, no confirmation, no counting), median of ``--reps``;
   against that the CPU of whole ``mcp-context-cost sweep --all`` runs of the same servers (a
   subprocess; its interpreter, tokenizer, staging, pages included), alternately with
   ``MCP_CONTEXT_COST_RESOLVE_ONCE=0`` (through npx/uvx at every launch) and ``=1`` (resolved once).
   Printed: sweep CPU per server against the CPU of the two bare launches a measurement makes by
   design (target at most ``TARGET_RATIO``), medians over ``--reps``. CPU is user + system time of every
   process the run started: this process makes itself a child subreaper and reaps whatever the
   launches orphan, so a server killed with its launcher still counts.

5. Catalog wall time (``--wall``). ``mcp-context-cost sweep --all`` over the first ``--servers``
   stdio entries (``--full``: the whole catalog), cold — an empty HOME (npm's ``~/.npm``, uv's
   ``~/.cache/uv``) and an empty harness cache (the sandbox's per-server caches), the tokenizer
   file and ``~/.npmrc`` aside — then warm (the same run again), each with and without resolve-once.

Every figure here is noisy on a shared machine: load is printed at the start and end.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from harness.core import tokenizer
from harness.db.catalog import load_catalog
from harness.db.targets import target_for
from harness.probe import reaper, resolve

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 0.74  # sweep CPU per server, at most this many times two bare launches


def become_subreaper() -> None:
    """Orphans of every launch this process starts are re-parented here (and reaped: ``reap``)."""
    if reaper.PRCTL is not None:
        reaper.PRCTL(reaper.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def children_cpu() -> float:
    """CPU seconds (user + system) of every reaped descendant so far."""
    reap()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def catalog_entries(limit: int | None) -> list[dict]:
    """The catalog's stdio entries as written (raw YAML dicts), the first ``limit`` of them."""
    raw = yaml.safe_load((ROOT / "servers.yaml").read_text(encoding="utf-8"))["servers"]
    stdio = [e for e in raw if e.get("command")]
    return stdio[:limit] if limit else stdio


def pick_servers(count: int, mode: str, bare_launch) -> list[dict]:
    """The first ``count`` catalog stdio entries whose bare launch lists tools here (warming them)."""
    picked = []
    for raw in catalog_entries(None):
        if len(picked) == count:
            break
        target = _target(raw)
        try:
            bare_launch(target, mode)
        except Exception as exc:  # noqa: BLE001 - a server that does not answer here is left out
            print(f"  (left out: {raw['name']}: {str(exc)[:80]})", flush=True)
            continue
        picked.append(raw)
    return picked


def _target(raw: dict):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "servers.yaml"
        path.write_text(yaml.safe_dump({"servers": [raw]}, sort_keys=False), encoding="utf-8")
        return target_for(load_catalog(path).entries[0])


def bare_cpu(raws: list[dict], mode: str, reps: int, bare_launch) -> dict[str, float]:
    """Median CPU seconds of one bare launch-and-list, per server."""
    out = {}
    for raw in raws:
        target = _target(raw)
        samples = []
        for _ in range(reps):
            before = children_cpu()
            bare_launch(target, mode, gentle=True)
            samples.append(children_cpu() - before)
        out[raw["name"]] = statistics.median(samples)
    return out


def sweep_run(raws: list[dict], work: Path, label: str, mode: str, once: bool, concurrency: int,
              env: dict | None = None) -> tuple[float, float, dict]:
    """One ``sweep --all`` subprocess over ``raws`` in a fresh repository: (CPU s, wall s, statuses)."""
    repo = work / label
    repo.mkdir(parents=True)
    (repo / "servers.yaml").write_text(yaml.safe_dump({"servers": raws}, sort_keys=False, width=1000),
                                       encoding="utf-8")
    for git in (["init", "-q", "-b", "main"], ["add", "servers.yaml"],
                ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "catalog"]):
        subprocess.run(["git", *git], cwd=repo, check=True, capture_output=True)
    argv = [sys.executable, "-m", "harness.cli", "sweep", "--root", str(repo), "--all",
            "--concurrency", str(concurrency), "--isolation", mode]
    child_env = dict(env or os.environ, **{resolve.SWITCH: "1" if once else "0"})
    cpu0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=child_env)
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    if done.returncode not in (0, 1):
        raise SystemExit(f"sweep ({label}) exited {done.returncode}:\n{done.stderr[-3000:]}")
    statuses = {}
    for path in sorted((repo / "results").glob("*/measurement.json")):
        statuses[path.parent.name] = yaml.safe_load(path.read_text())["status"]
    return cpu, wall, statuses


def cpu_part(count: int, mode: str, reps: int, concurrency: int, bare_launch) -> None:
    """Part 4 (see module doc)."""
    become_subreaper()
    print(f"part 4: CPU per server; picking {count} catalog servers that answer a bare launch here "
          f"(isolation {mode}; warming them)", flush=True)
    raws = pick_servers(count, mode, bare_launch)
    print(f"  servers: {', '.join(r['name'] for r in raws)}", flush=True)
    bare = bare_cpu(raws, mode, reps, bare_launch)
    two_bare = 2 * sum(bare.values())
    runs: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-cpu-") as tmp:
        sweep_run(raws, Path(tmp), "warmup", mode, True, concurrency)  # every install warm, untimed
        for rep in range(reps):
            for once in (False, True):
                cpu, wall, statuses = sweep_run(raws, Path(tmp), f"r{rep}-{int(once)}", mode, once, concurrency)
                runs[once].append(cpu)
                bad = sorted(k for k, v in statuses.items() if v not in ("measured", "dynamic"))
                print(f"  sweep {'resolve-once' if once else 'launcher    '} rep {rep + 1}: CPU {cpu:6.1f}s, "
                      f"wall {wall:6.1f}s" + (f"; not measured: {', '.join(bad)}" if bad else ""), flush=True)
    n = len(raws)
    print(f"  bare launch-and-list CPU (median of {reps}): {sum(bare.values()) / n:.2f}s per server; "
          f"two bare launches: {two_bare / n:.2f}s per server")
    for once in (False, True):
        per = statistics.median(runs[once]) / n
        ratio = per / (two_bare / n)
        print(f"  sweep CPU per server, {'with' if once else 'without'} resolve-once: {per:.2f}s = {ratio:.2f}x "
              f"two bare launches (target <= {TARGET_RATIO}x: {'ok' if ratio <= TARGET_RATIO else 'ABOVE TARGET'})")


def cold_env(home: Path, cache: Path) -> dict:
    """The environment of a cold run: an empty HOME and harness cache, with the tokenizer file and
    npm's and uv's settings (not their caches) carried over."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("npm_config_cache", "NPM_CONFIG_CACHE", "UV_CACHE_DIR", "XDG_CACHE_HOME")}
    home.mkdir(parents=True)
    cache.mkdir(parents=True)
    for config in (Path.home() / ".npmrc", Path.home() / ".config" / "uv"):
        if config.exists():
            target = home / config.relative_to(Path.home())
            target.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if config.is_dir() else shutil.copy2)(config, target)
    (cache / "tiktoken").symlink_to(tokenizer.cache_dir(), target_is_directory=True)
    return dict(env, HOME=str(home), MCP_CONTEXT_COST_CACHE=str(cache))


def wall_part(count: int | None, mode: str, concurrency: int) -> None:
    """Part 5 (see module doc)."""
    become_subreaper()
    raws = catalog_entries(count)
    print(f"part 5: catalog wall time, {len(raws)} stdio entries, isolation {mode}, concurrency {concurrency}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-sweep-wall-") as tmp:
        for once in (False, True):
            env = cold_env(Path(tmp) / f"home-{int(once)}", Path(tmp) / f"cache-{int(once)}")
            for phase in ("cold", "warm"):
                cpu, wall, statuses = sweep_run(raws, Path(tmp), f"{phase}-{int(once)}", mode, once, concurrency, env)
                good = sum(v in ("measured", "dynamic") for v in statuses.values())
                print(f"  {phase} {'with' if once else 'without'} resolve-once: wall {wall:7.1f}s, CPU {cpu:7.1f}s, "
                      f"{good}/{len(statuses)} measured", flush=True)
