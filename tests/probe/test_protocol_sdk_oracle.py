"""The official TypeScript SDK (npm, pinned) as the oracle for what the record says about it: a
compatibility finding naming ``typescript-sdk`` exactly when the SDK's own schemas reject what the
fixture sends, and the SDK's client listing tools wherever the harness measures through a transport
or a refusal it would take too (``ts_sdk_oracle.js``)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401
from tests.probe.protocol_helpers import PortServer, fixture, sse_server

pytestmark = pytest.mark.slow
SDK = "@modelcontextprotocol/sdk@1.32.2"
ORACLE = Path(__file__).with_name("ts_sdk_oracle.js")


@pytest.fixture(scope="module")
def sdk_dir(tmp_path_factory) -> Path:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail("node and npm are needed: the TypeScript SDK is the oracle here")
    where = tmp_path_factory.mktemp("ts-sdk")
    subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(where), SDK], check=True,
                   capture_output=True, timeout=600, env=os.environ)
    return where


def ts_rejects(sdk_dir: Path, replies: list[tuple[str, dict]]) -> list[str]:
    lines = "".join(json.dumps({"method": m, "result": r}) + "\n" for m, r in replies)
    done = subprocess.run(["node", str(ORACLE), str(sdk_dir), "validate"], input=lines.encode(), capture_output=True,
                          check=True, timeout=60)
    return done.stdout.decode().split("\n")[:-1]


def ts_lists(sdk_dir: Path, url: str, kind: str) -> dict:
    done = subprocess.run(["node", str(ORACLE), str(sdk_dir), "list", url, kind], capture_output=True, check=True,
                          timeout=90)
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def dumped_results(script: str, *flags: str) -> list[dict]:
    done = subprocess.run([sys.executable, str(fixture(script)), *flags, "--dump"], capture_output=True, check=True,
                          timeout=60)
    return [json.loads(line)["result"] for line in done.stdout.decode("utf-8", "replace").splitlines() if line]


@pytest.mark.parametrize("script,flags", [
    ("framing", ()),
    ("framing", ("--schema", "input-type")),
    ("framing", ("--schema", "name-number")),
    ("cursor_pages", ("--cursors", "EMPTY", "--end-null")),
    ("cursor_pages", ("--cursors", "a,b")),
])
def test_a_typescript_finding_exactly_when_the_sdk_rejects_a_page(script, flags, sdk_dir, results_root):
    verdicts = ts_rejects(sdk_dir, [("tools/list", r) for r in dumped_results(script, *flags)])
    command = shlex.join([sys.executable, str(fixture(script)), *flags])
    run = measure_and_write(Target(name=f"oracle-{script}", command=command, timeout_seconds=20), results_root)
    ours = [f for f in run.record["compatibility"]["findings"] if "typescript-sdk" in f["rejectedBy"]]
    assert bool(ours) == any(v.startswith("reject") for v in verdicts), (verdicts, ours)
    for page, verdict in enumerate(verdicts, start=1):
        if verdict.startswith("reject"):
            assert any(f["what"].startswith(f"page {page} of tools/list") for f in ours)


def test_the_sdk_agrees_a_missing_server_info_is_rejected(sdk_dir):
    assert ts_rejects(sdk_dir, [("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})]) == \
        ["reject serverInfo"]


@pytest.mark.parametrize("flags,lists", [
    (("--refuse-initialized", "bare"), False),     # the record names typescript-sdk as stopping here
    (("--refuse-initialized", "jsonrpc"), False),
    (("--resume", "1"), True),                      # resumption: the SDK lists it, and so does the harness
    (("--resume", "2", "--retry", "50"), True),
])
def test_the_sdk_client_stops_or_lists_as_the_record_says(flags, lists, sdk_dir, results_root):
    here = sse_server(*flags)
    try:
        answer = ts_lists(sdk_dir, here.url(), "streamable")
        run = measure_and_write(Target(name="oracle-http", url=here.url(), timeout_seconds=20), results_root)
    finally:
        here.stop()
    assert run.record["status"] == "measured", run.notes
    stops = any("typescript-sdk" in f["rejectedBy"] for f in run.record["compatibility"]["findings"])
    assert ("tools" in answer) == lists and stops == (not lists), answer
    if lists:
        assert answer["tools"] == run.record["toolCount"]


def test_the_sdk_lists_the_legacy_transport_as_the_harness_does(sdk_dir, results_root):
    here = PortServer([sys.executable, str(fixture("legacy_sse_server")), "--port", "0", "--tools", "3"])
    url = f"http://127.0.0.1:{here.port}/sse"
    try:
        answer = ts_lists(sdk_dir, url, "sse")
        run = measure_and_write(Target(name="oracle-legacy", url=url, timeout_seconds=20), results_root)
    finally:
        here.stop()
    assert answer == {"tools": 3} and run.record["toolCount"] == 3 and run.record["transport"] == "sse"


# --- the official Python SDK (the project's own ``mcp`` dependency) -------------------------------

def python_sdk_lists(streams_cm, seconds: float = 10.0) -> int | str:
    """Tools the Python SDK's client lists through ``streams_cm``, or the error that stopped it."""
    import anyio

    from mcp.client.session import ClientSession

    async def run() -> int | str:
        try:
            with anyio.fail_after(seconds):
                async with streams_cm as streams, ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    return len((await session.list_tools()).tools)
        except Exception as exc:  # noqa: BLE001 - what stopped the client is the answer
            return f"{type(exc).__name__}"

    return anyio.run(run)


@pytest.mark.parametrize("flags", [(), ("--bom", "first"), ("--bom", "every"), ("--not-utf8",)])
def test_a_python_finding_exactly_when_the_python_sdk_client_fails(flags, results_root):
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(fixture("framing")), *flags])
    answer = python_sdk_lists(stdio_client(params))
    command = shlex.join([sys.executable, str(fixture("framing")), *flags])
    run = measure_and_write(Target(name="py-oracle", command=command, timeout_seconds=20), results_root)
    assert run.record["status"] == "measured", run.notes
    rejected = any("python-sdk" in f["rejectedBy"] for f in run.record["compatibility"]["findings"])
    assert rejected == (answer != run.record["toolCount"]), answer


def test_the_python_sdk_goes_on_past_a_refused_initialized_notification(results_root):
    from mcp.client.streamable_http import streamable_http_client

    here = sse_server("--refuse-initialized", "bare")
    try:
        answer = python_sdk_lists(streamable_http_client(here.url()))
        run = measure_and_write(Target(name="py-oracle-http", url=here.url(), timeout_seconds=20), results_root)
    finally:
        here.stop()
    assert answer == run.record["toolCount"] == 1
    refusal = [f for f in run.record["compatibility"]["findings"] if "notifications/initialized" in f["what"]]
    assert refusal and "python-sdk" not in refusal[0]["rejectedBy"]
