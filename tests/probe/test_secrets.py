"""Issue #3 acceptance: a declared secret value never leaves the harness.

A sentinel value is put where the harness reads secrets from — a declared env var (``Target.env``)
or a header's ``MCP_HEADER_<NAME>`` variable — and servers are made to echo it everywhere they can:
a tool description, stderr, a JSON-RPC error message, a stdout noise line, serverInfo, an HTTP
error body. The value must appear in no file the harness writes (record, badge) and in nothing the
CLI prints; and each test first checks the server really did receive it, so a pass means redaction
rather than a secret that never arrived.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.probe.redact import MASK
from harness.probe.remote import header_env_name
from harness.probe.target import Target
from harness.publish.badge import badge_for, write_badge
from tests.conftest import fixture_command
from tests.probe.helpers import (HttpFixture, assert_no_traceback, measure_and_write, nothing_left,  # noqa: F401
                                 results_root, run_cli)

# An unclosed subprocess transport or pipe (a leak the loop reports at garbage collection) fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

SENTINEL = "sk-live-SENTINEL-5f2c9a7e1d3b4c60a9e8f7d6c5b4a392"
NAME = "SENTINEL_API_KEY"
HEADER = "Authorization"

# A stdio server that leaks $SENTINEL_API_KEY in the way argv[1] names.
ECHO_SERVER = r'''
import json, os, sys

mode, secret = sys.argv[1], os.environ.get("SENTINEL_API_KEY", "")
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
if mode == "stderr":
    print("Error: invalid API key " + secret + " (expected a live key)", file=sys.stderr, flush=True)
    sys.exit(1)
if mode == "noise":
    print("starting with key " + secret, flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if "id" not in req:
        continue
    if req["method"] == "initialize":
        if mode == "init-error":
            send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32000, "message": "bad key " + secret,
                  "data": {"key": secret}}})
            continue
        send({"jsonrpc": "2.0", "id": req["id"], "result": {
            "protocolVersion": req["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo-" + secret, "version": secret}, "instructions": "key " + secret}})
    elif req["method"] == "tools/list":
        send({"jsonrpc": "2.0", "id": req["id"], "result": {"tools": [
            {"name": "whoami", "description": "key " + secret, "inputSchema": {"type": "object"}}]}})
'''


@pytest.fixture(autouse=True)
def secret_env(monkeypatch):
    monkeypatch.setenv(NAME, SENTINEL)
    monkeypatch.setenv(header_env_name(HEADER), f"Bearer {SENTINEL}")


@pytest.fixture(scope="module")
def echo_script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("echo") / "echo_server.py"
    path.write_text(ECHO_SERVER)
    return path


def echo_command(script: Path, mode: str) -> str:
    return shlex.join([sys.executable, str(script), mode])


class _EchoHandler(BaseHTTPRequestHandler):
    """Streamable HTTP endpoint echoing the Authorization header: ``/describe`` puts it in a tool
    description and serverInfo; ``/reject`` answers HTTP 400 with it in a plain-text body."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get(HEADER, "")
        self.server.seen.append(auth)
        if self.path.endswith("/reject"):
            return self._send(400, "text/plain", f"rejected credential {auth}".encode())
        req = json.loads(body)
        if "id" not in req:
            return self._send(202, "application/json", b"")
        if req["method"] == "initialize":
            result = {"protocolVersion": req["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": f"echo {auth}", "version": "1"}}
        else:
            result = {"tools": [{"name": "whoami", "description": f"you sent {auth}", "inputSchema": {"type": "object"}}]}
        self._send(200, "application/json", json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": result}).encode())

    def _send(self, code: int, kind: str, data: bytes):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def echo_http():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
    httpd.daemon_threads = True
    httpd.seen = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    server = HttpFixture("http_server.py", tmp_path_factory.mktemp("http") / "stderr.log")
    yield server
    server.stop()


@pytest.fixture
def out(results_root, request) -> Path:
    """This test's output folder inside the module's results directory (checked by nothing_left)."""
    path = results_root / re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)
    path.mkdir()
    return path


def assert_nowhere(*roots: Path, texts: tuple[str, ...] = ()) -> int:
    """The sentinel is in no file under ``roots`` and in none of ``texts``; how many files were read."""
    files = [p for root in roots for p in Path(root).rglob("*") if p.is_file()]
    for path in files:
        assert SENTINEL.encode() not in path.read_bytes(), f"secret leaked into {path}"
    for text in texts:
        assert SENTINEL not in text, f"secret leaked into output: {text[:2000]}"
    return len(files)


def write_all(run, root: Path) -> Path:
    """Write the run's badge beside its record (both under ``root``); the badge path."""
    rec = run.record
    return write_badge(root / "badges" / f"{rec['server']}.json", badge_for(rec["status"], rec["totalTokens"]))


# --- library: measure_sync + record.build + record.write + badge ----------------------------------

def test_secret_in_a_tool_description_is_redacted_before_counting(out):
    target = Target(name="describe-env", command=fixture_command("well_behaved", "--describe-env", NAME),
                    env=(NAME,), timeout_seconds=5)
    run = measure_and_write(target, out / "results")
    assert SENTINEL in json.dumps(run.measurement.capture.tools)  # the server really received it
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["toolCount"] == 3
    assert f'"{NAME}": "{MASK}"' in rec["rawToolsCapture"][2]["description"]
    assert "a declared secret value appeared in the tool list and was redacted before counting" in run.notes
    assert rec["envVarNames"] == [NAME]
    write_all(run, out)
    assert assert_nowhere(out) == 2


@pytest.mark.parametrize("mode,status", [
    ("stderr", "auth-required"),
    ("init-error", "startup-failure"),
    ("noise", "measured"),
    ("describe", "measured"),
])
def test_secret_echoed_by_a_stdio_server_is_redacted_everywhere(mode, status, echo_script, out):
    target = Target(name=f"echo-{mode}", command=echo_command(echo_script, mode), env=(NAME,), timeout_seconds=5)
    run = measure_and_write(target, out / "results")
    capture = run.measurement.capture
    raw = json.dumps([capture.stderr_tail, capture.noise_sample, capture.server_name, capture.tools,
                      capture.failure and capture.failure.message])
    assert SENTINEL in raw  # the server really echoed it somewhere the harness saw
    rec = run.record
    assert rec["status"] == status, run.notes
    assert MASK in json.dumps(rec)
    if mode == "stderr":
        assert f"Error: invalid API key {MASK} (expected a live key)" in rec["notes"][0]
    write_all(run, out)
    assert_nowhere(out)


@pytest.mark.parametrize("path,status", [("/describe", "measured"), ("/reject", "unreachable")])
def test_header_value_echoed_by_a_remote_server_is_redacted(path, status, echo_http, out):
    httpd, base = echo_http
    httpd.seen.clear()
    target = Target(name=f"echo-http{path.replace('/', '-')}", url=base + path, headers=(HEADER,), timeout_seconds=5)
    run = measure_and_write(target, out / "results")
    assert f"Bearer {SENTINEL}" in httpd.seen  # the header value was sent
    rec = run.record
    assert rec["status"] == status, run.notes
    assert rec["headerNames"] == [HEADER]
    assert MASK in json.dumps(rec)
    write_all(run, out)
    assert_nowhere(out)


def test_header_value_sent_to_the_fixture_http_server_is_not_recorded(http_server, out):
    target = Target(name="http-header", url=http_server.url, headers=(HEADER,), timeout_seconds=10)
    run = measure_and_write(target, out / "results")
    assert run.record["status"] == "measured", run.notes
    assert run.record["headerNames"] == [HEADER]
    write_all(run, out)
    assert_nowhere(out)


# --- the CLI: nothing printed, nothing written ----------------------------------------------------

def cli_env() -> dict:
    return dict(os.environ, **{NAME: SENTINEL, header_env_name(HEADER): f"Bearer {SENTINEL}"})


def cli_measure(out: Path, name: str, *what: str):
    done = run_cli("measure", *what, "--name", name, "--results", str(out / "results"),
                   "--badges", str(out / "badges"), "--timeout", "5", env=cli_env())
    assert_no_traceback(done)
    assert (out / "results" / name / "measurement.json").is_file(), done.stdout + done.stderr
    assert (out / "badges" / f"{name}.json").is_file()
    assert_nowhere(out, texts=(done.stdout, done.stderr))
    return done


@pytest.mark.slow
def test_cli_never_prints_or_writes_a_declared_env_value(echo_script, out):
    describe = cli_measure(out, "cli-describe", "--command", fixture_command("well_behaved", "--describe-env", NAME),
                           "--env", NAME, "--isolation", "host")
    assert describe.returncode == 0 and "cli-describe: measured" in describe.stdout
    assert "redacted" in describe.stdout
    for mode, code in (("stderr", 3), ("init-error", 3), ("noise", 0), ("describe", 0)):
        done = cli_measure(out, f"cli-{mode}", "--command", echo_command(echo_script, mode), "--env", NAME,
                           "--isolation", "host")
        assert done.returncode == code, done.stdout + done.stderr
    stderr_record = json.loads((out / "results" / "cli-stderr" / "measurement.json").read_text())
    assert stderr_record["status"] == "auth-required"


@pytest.mark.slow
def test_cli_never_prints_or_writes_a_header_value(echo_http, http_server, out):
    _, base = echo_http
    fixture = cli_measure(out, "cli-http", "--url", http_server.url, "--header", HEADER)
    assert fixture.returncode == 0, fixture.stdout + fixture.stderr
    echoed = cli_measure(out, "cli-http-echo", "--url", base + "/describe", "--header", HEADER)
    assert echoed.returncode == 0, echoed.stdout + echoed.stderr
    rejected = cli_measure(out, "cli-http-reject", "--url", base + "/reject", "--header", HEADER)
    assert rejected.returncode == 3, rejected.stdout + rejected.stderr
    assert MASK in rejected.stdout
