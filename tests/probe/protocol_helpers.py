"""Helpers for the protocol tests: the expected value of a fixture computed independently
of the harness, and fixture servers started as real processes.

The expected value never comes from ``harness.core.canonical``: node parses the exact reply bytes a
fixture sends (its ``--dump``), concatenates the pages' ``result.tools`` and runs ``JSON.stringify``;
only the count uses the project's tokenizer (o200k_base), as the acceptance asks.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.core import tokenizer
from tests.conftest import FIXTURE_SERVERS, REPO
from tests.probe.helpers import stop_process

PROTOCOL_CASES = REPO / "tests" / "fixtures" / "protocol_cases"

# One JSON-RPC reply per line (a one-element batch array is unwrapped); prints the pages' tools joined, a
# newline, and how many there are.
_NODE_JOIN = r"""
const lines = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l.length > 0);
const tools = [].concat(...lines.map((l) => { const v = JSON.parse(l); return (Array.isArray(v) ? v[0] : v).result.tools; }));
process.stdout.write(JSON.stringify(tools) + "\n" + tools.length);
"""


@dataclass(frozen=True)
class Expected:
    """What a correct measurer publishes for the dumped replies: tokens, tool count, SHA-256."""

    tokens: int
    tools: int
    sha256: str


def expected_from(reply_lines: bytes) -> Expected:
    """``Expected`` for the exact bytes a fixture sends (one reply per line), via node."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: the protocol tests use it as the oracle")
    done = subprocess.run([node, "-e", _NODE_JOIN], input=reply_lines, capture_output=True, check=True, timeout=60)
    canonical, _, count = done.stdout.decode("utf-8").rpartition("\n")  # JSON.stringify never writes a raw LF
    return Expected(tokenizer.count(canonical), int(count), hashlib.sha256(canonical.encode("utf-8")).hexdigest())


def dump(script: Path, *flags: str) -> Expected:
    """Run ``script --dump FLAGS`` and compute ``Expected`` from what it prints."""
    done = subprocess.run([sys.executable, str(script), *flags, "--dump"], capture_output=True, check=True, timeout=60)
    return expected_from(done.stdout)


def fixture(name: str) -> Path:
    return FIXTURE_SERVERS / f"{name}.py"


def assert_matches(record: dict, expected: Expected) -> None:
    """The record's headline equals the independently computed value."""
    assert record["status"] in ("measured", "dynamic"), record["notes"]
    assert record["totalTokens"] == expected.tokens, record["notes"]
    assert record["toolCount"] == expected.tools
    assert record["canonicalSha256"] == expected.sha256


class PortServer:
    """A fixture HTTP server process that prints ``PORT <n>`` (``sse_server.py``) or takes the port
    as its first argument (the shared ``http_sse.py``); stopped with SIGTERM, then SIGKILL."""

    def __init__(self, argv: list[str], port: int | None = None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if port is None:
            line = self.proc.stdout.readline().decode()
            if not line.startswith("PORT "):
                self.stop()
                raise RuntimeError(f"{argv} did not print its port: {line!r}")
            port = int(line.split()[1])
        self.port = port

    def url(self, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        stop_process(self.proc)


def sse_server(*flags: str) -> PortServer:
    """``tests/fixtures/servers/sse_server.py FLAGS`` on a free port."""
    return PortServer([sys.executable, str(fixture("sse_server")), "--port", "0", *flags])
