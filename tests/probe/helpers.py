"""Shared helpers for the probe acceptance tests: measure a target, build and write its
record into a module's results directory, and check that nothing is left behind afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.core.jsparse import parse
from harness.probe import process, build_record
from harness.probe.measure import Measurement, measure_sync
from harness.probe.target import Target
from harness.util import schemas
from tests.conftest import REPO

# Generous: proves "bounded time", never a performance claim.


@dataclass
class Run:
    measurement: Measurement
    record: dict
    path: Path
    seconds: float

    @property
    def notes(self) -> str:
        """All notes as one text, for ``in`` checks."""
        return "\n".join(self.record["notes"])


def measure_and_write(target: Target, results: Path, **kwargs) -> Run:
    """Measure ``target``, build its record (which validates it) and write it under ``results``.

    Asserts the file exists, reads back to the same record and validates (a hang is pytest-timeout's to end).
    """
    started = time.monotonic()
    measurement = measure_sync(target, **kwargs)
    seconds = time.monotonic() - started
    rec = build_record.build(measurement)
    path = build_record.write(rec, results)
    assert path.is_file()
    assert path == results / target.name / "measurement.json"
    on_disk = parse(path.read_text(encoding="utf-8"))
    schemas.check("measurement", on_disk)
    assert on_disk["status"] == rec["status"]
    return Run(measurement, rec, path, seconds)


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"


def wait_gone(pids, seconds: float = 5.0) -> set[int]:
    """Wait up to ``seconds`` for every pid in ``pids`` to be gone; the ones still alive."""
    ends = time.monotonic() + seconds
    alive = {p for p in pids if process_alive(p)}
    while alive and time.monotonic() < ends:
        time.sleep(0.05)
        alive = {p for p in alive if process_alive(p)}
    return alive


def describe_pids(pids) -> str:
    lines = []
    for pid in sorted(pids):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmd = "?"
        lines.append(f"{pid}: {cmd}")
    return "; ".join(lines)


def assert_nothing_left(results_dirs: list[Path], before: set[int] = frozenset()) -> None:
    """No child process of this test process remains (other than ``before``: helpers that other
    test modules keep for the whole session, e.g. the node oracle), and no temp/partial file in
    ``results_dirs``."""
    ends = time.monotonic() + 5.0
    left = process.descendants(os.getpid()) - before
    while left and time.monotonic() < ends:
        time.sleep(0.1)
        left = {p for p in process.descendants(os.getpid()) - before if process_alive(p)}
    assert not left, f"child processes left behind: {describe_pids(left)}"
    for folder in results_dirs:
        leftovers = [p for p in folder.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]
        assert not leftovers, f"partial/temp files left in {folder}: {leftovers}"


@pytest.fixture(scope="module")
def results_root(tmp_path_factory) -> Path:
    """One results directory per test module; every record and badge of the module goes under it."""
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module", autouse=True)
def nothing_left(results_root):
    """After the whole module: no child process it started remains and no partial/temp file was left."""
    before = process.descendants(os.getpid())
    yield
    assert_nothing_left([results_root], before)


def run_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m harness.cli ARGS`` from the repository root; stdout and stderr captured."""
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def assert_no_traceback(done: subprocess.CompletedProcess) -> None:
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "Exception ignored" not in text, text


class HttpFixture:
    """A fixture HTTP server from tests/fixtures/servers, started on a free port."""

    def __init__(self, script: str, log: Path):
        from tests.conftest import FIXTURE_SERVERS

        self.log = log
        self._log_handle = open(log, "wb")
        self.proc = subprocess.Popen([sys.executable, str(FIXTURE_SERVERS / script), "--port", "0"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._log_handle)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"{script} did not print its port: {line!r}; log: {log.read_text()}")
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after 10 s; the exit code."""
        code = stop_process(self.proc)
        self._log_handle.close()
        return code


def stop_process(proc: subprocess.Popen) -> int | None:
    """SIGTERM, then SIGKILL after 10 s; close its stdout; the exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    if proc.stdout:
        proc.stdout.close()
    return proc.returncode
