"""A resolution run ends when its process ends, not when its pipes close: an install script that leaves
a process running with the install's stdout or stderr (a daemon, a background update check) must not
turn a finished install into one cut off at its bound. What the run printed before it ended is read;
what it left running is ended with it; a run that itself never ends is still cut off at the bound, and
only the end of a long output is kept (where the dumper's line is)."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from harness.probe import resolve
from harness.probe.target import Target

LINE = b'{"dumped": true}'


@pytest.fixture
def run(monkeypatch, tmp_path):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))

    def go(script: str, bound: float):
        target = Target(name="pipes", command="npx -y pipes-server@1.0.0")
        return asyncio.run(resolve._run(target, ["sh", "-c", script], {"PATH": os.environ["PATH"]}, "host", bound))

    return go


def _alive(tag: str) -> bool:
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if tag.encode() in handle.read():
                    return True
        except OSError:
            continue
    return False


@pytest.mark.slow
@pytest.mark.parametrize("held", ["", ">/dev/null", "2>/dev/null"], ids=["both", "stderr", "stdout"])
def test_a_run_that_ended_is_read_at_once_whatever_it_left_holding_its_pipes(run, held):
    tag = f"60.{uuid.uuid4().int % 10**12:012d}"  # a sleep this long is this test's own
    script = f"(sleep {tag} {held} &) ; echo 'npm warn x' >&2; echo '{LINE.decode()}'"
    out, ran = run(script, 30)
    assert not ran.timed_out and ran.exit_code == 0 and out.strip() == LINE, (out, ran)
    assert b"npm warn x" in ran.stderr
    assert not _alive(tag)  # and what held them is gone


@pytest.mark.slow
def test_a_run_that_fails_while_something_holds_its_pipes_keeps_its_exit_code(run):
    tag = f"60.{uuid.uuid4().int % 10**12:012d}"
    out, ran = run(f"(sleep {tag} &) ; echo 'npm error code E404' >&2; exit 3", 30)
    assert ran.exit_code == 3 and not ran.timed_out and b"E404" in ran.stderr
    assert not _alive(tag)


@pytest.mark.slow
def test_a_run_that_never_ends_is_cut_off_at_its_bound(run):
    tag = f"60.{uuid.uuid4().int % 10**12:012d}"
    out, ran = run(f"echo '{LINE.decode()}'; sleep {tag}", 3)
    assert ran.timed_out and ran.exit_code is None
    assert not _alive(tag)  # cut off: what it ran is killed, not left sleeping


@pytest.mark.parametrize("size", [1001, 100_000, 3_000_000])
def test_a_run_that_prints_more_than_the_bound_keeps_its_end(run, monkeypatch, size):
    """An install script's long build log on stdout: the dumper's line, printed last, is still read."""
    monkeypatch.setattr(resolve, "MAX_OUTPUT", 1000)
    out, ran = run(f"head -c {size} /dev/zero | tr '\\0' 'x'; echo; echo '{LINE.decode()}'", 30)
    assert ran.exit_code == 0 and len(out) == 1000 and out.endswith(LINE + b"\n"), (len(out), out[-40:])
