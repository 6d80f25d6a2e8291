"""No value the harness hands a server that is not public ever leaves
the harness — not whole, not encoded, not in part.

Secrets are put everywhere the harness hands them out: a declared env var, a header's
``MCP_HEADER_<NAME>`` variable, the credentials of a proxy or package-index URL in the host
environment, a key written into the launch command. Servers then echo them everywhere they can
(a tool description, serverInfo, instructions, stderr across the tail truncation, a JSON-RPC error
message and data, a stdout noise line across the sample cut, a repeated ``nextCursor``, an HTTP
error body) and in every encoding (``tests/fixtures/servers/leaks_secrets.py``). No form of the
secret (``tests.hostile.forbidden_forms``) may appear in any file the harness writes or in
anything the CLI prints; each test first checks the server really received the value (a proof
file holding its SHA-256), so a pass means redaction rather than a secret that never arrived.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.core.jsparse import parse
from harness.core.rederive import rederive
from harness.probe.redact import MASK
from harness.probe.remote import header_env_name
from harness.probe.target import Target
from harness.pages.badge import badge_for, write_badge
from tests.conftest import fixture_command
from tests.hostile import PASSWORD, SENTINEL, assert_safe_output, assert_secret_absent
from tests.probe.helpers import (HttpFixture, assert_no_traceback, measure_and_write, nothing_left,  # noqa: F401
                                 results_root, run_cli)

# An unclosed subprocess transport or pipe (a leak the loop reports at garbage collection) fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

NAME = "MY_API_KEY"
HEADER = "Authorization"
PROXY = f"http://proxyuser:{PASSWORD}@127.0.0.1:9"
INDEX = f"https://__token__:{PASSWORD}@pypi.invalid/simple"
TAIL = 1024  # a small stderr tail, so the fixture's cut lands inside the secret


@pytest.fixture(autouse=True)
def secret_env(monkeypatch):
    monkeypatch.setenv(NAME, SENTINEL)
    monkeypatch.setenv(header_env_name(HEADER), f"Bearer {SENTINEL}")
    monkeypatch.setenv("MCP_CONTEXT_COST_STDERR_TAIL_BYTES", str(TAIL))


@pytest.fixture
def out(results_root, request) -> Path:
    """This test's output folder inside the module's results directory (checked by nothing_left)."""
    path = results_root / re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)
    path.mkdir()
    return path


def leak_command(where: str, *leak: str, proof: Path | None = None, api_key: str | None = None) -> str:
    args = [f"--leak={name}" for name in leak] + ["--where", where, "--tail-bytes", str(TAIL)]
    args += [f"--proof={proof}"] if proof else []
    args += ["--api-key", api_key] if api_key else []
    return fixture_command("leaks_secrets", *args)


def assert_received(proof: Path, **expected: str) -> None:
    """The server got each value (its SHA-256 is in the proof file it wrote)."""
    seen = dict(line.split() for line in proof.read_text().splitlines())
    for name, value in expected.items():
        assert seen[name] == hashlib.sha256(value.encode()).hexdigest(), f"{name} did not reach the server"


def write_badge_beside(run, root: Path) -> Path:
    rec = run.record
    return write_badge(root / "badges" / f"{rec['server']}.json", badge_for(rec["status"], rec["totalTokens"]))


def assert_rederives(path: Path) -> None:
    """The published numbers still re-derive from the published (redacted) capture."""
    comparison = rederive(parse(path.read_text(encoding="utf-8")))
    assert comparison.ok, comparison.mismatches


# --- library: measure_sync + record.build + record.write + badge ----------------------------------

WHERE = [("describe", "measured"), ("error", "startup-failure"), ("stderr", "startup-failure"),
         ("noise", "measured"), ("cursor", "measured")]  # a repeated cursor and page: a note holding the cursor


@pytest.mark.parametrize("where,status", WHERE)
def test_a_declared_value_echoed_in_every_encoding_is_redacted_everywhere(where, status, out, tmp_path):
    proof = tmp_path / "proof"
    target = Target(name=f"leak-{where}", command=leak_command(where, NAME, proof=proof), env=(NAME,),
                    timeout_seconds=5)
    run = measure_and_write(target, out / "results")
    assert_received(proof, **{NAME: SENTINEL})
    rec = run.record
    assert rec["status"] == status, run.notes
    assert MASK in json.dumps(rec), "the server's echo should have been found and masked"
    assert rec["envVarNames"] == [NAME]
    write_badge_beside(run, out)
    assert assert_secret_absent(SENTINEL, roots=(out,), texts=(json.dumps(rec),)) == 3
    if where == "describe":
        assert "a declared secret value appeared in the tool list and was redacted before counting" in run.notes
    if status == "measured":
        assert_rederives(run.path)


def test_the_stderr_tail_is_cut_only_after_redaction(out, tmp_path):
    """The fixture writes the secret so that the last TAIL bytes of stderr begin in its middle:
    truncating first would publish its second half."""
    target = Target(name="leak-tail", command=leak_command("stderr", NAME), env=(NAME,), timeout_seconds=5)
    run = measure_and_write(target, out / "results")
    tail = run.record["stderrTail"]
    assert len(tail.encode()) <= TAIL
    assert f"\n{MASK}...." in tail  # the value the cut fell into, masked whole
    assert tail.rstrip().endswith("Error: giving up")
    assert_secret_absent(SENTINEL, texts=(tail, *run.record["notes"]))


@pytest.mark.parametrize("where,status", [("describe", "measured"), ("stderr", "startup-failure"),
                                          ("error", "startup-failure")])
def test_proxy_and_index_credentials_handed_to_the_server_are_redacted(where, status, out, tmp_path, monkeypatch):
    proof = tmp_path / "proof"
    for name, value in (("HTTP_PROXY", PROXY), ("https_proxy", PROXY), ("ALL_PROXY", PROXY),
                        ("PIP_INDEX_URL", INDEX), ("UV_INDEX_URL", INDEX), ("npm_config_registry", INDEX)):
        monkeypatch.setenv(name, value)
    leaked = ("HTTP_PROXY", "https_proxy", "PIP_INDEX_URL", "npm_config_registry")
    target = Target(name=f"proxy-{where}", command=leak_command(where, *leaked, proof=proof), timeout_seconds=5)
    run = measure_and_write(target, out / "results")
    assert_received(proof, HTTP_PROXY=PROXY, PIP_INDEX_URL=INDEX, npm_config_registry=INDEX)
    assert run.record["status"] == status, run.notes
    write_badge_beside(run, out)
    assert_secret_absent(PASSWORD, roots=(out,), texts=tuple(run.record["notes"]))
    assert "127.0.0.1:9" in json.dumps(run.record) or where == "stderr"  # only the credentials are masked


def test_a_key_written_into_the_launch_command_is_not_recorded(out, tmp_path):
    proof = tmp_path / "proof"
    target = Target(name="argv-key", command=leak_command("describe", NAME, proof=proof, api_key=PASSWORD),
                    env=(NAME,), timeout_seconds=5)
    run = measure_and_write(target, out / "results")
    assert_received(proof, **{NAME: SENTINEL})
    assert f"--api-key {MASK}" in run.record["launchCommand"]
    assert run.record["status"] == "measured"
    assert_secret_absent(PASSWORD, roots=(out,))
    assert_secret_absent(SENTINEL, roots=(out,))
    assert_rederives(run.path)


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
    write_badge_beside(run, out)
    assert assert_secret_absent(SENTINEL, roots=(out,)) == 2


# --- remote: header values ------------------------------------------------------------------------

class _EchoHandler(BaseHTTPRequestHandler):
    """Streamable HTTP endpoint echoing the Authorization header: ``/describe`` puts it in a tool
    description and serverInfo; ``/reject`` answers HTTP 400 with it in a plain-text body, placed
    across the 200-character cut of the error snippet."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get(HEADER, "")
        self.server.seen.append(auth)
        if self.path.endswith("/reject"):
            return self._send(400, "text/plain", ("r" * 163 + f"rejected credential {auth}").encode())
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
    write_badge_beside(run, out)
    assert_secret_absent(SENTINEL, roots=(out,))


@pytest.mark.slow
def test_header_value_sent_to_the_fixture_http_server_is_not_recorded(http_server, out):
    target = Target(name="http-header", url=http_server.url, headers=(HEADER,), timeout_seconds=10)
    run = measure_and_write(target, out / "results")
    assert run.record["status"] == "measured", run.notes
    assert run.record["headerNames"] == [HEADER]
    write_badge_beside(run, out)
    assert_secret_absent(SENTINEL, roots=(out,))


# --- the CLI: nothing printed, nothing written ----------------------------------------------------

def cli_env(**extra: str) -> dict:
    return dict(os.environ, **{NAME: SENTINEL, header_env_name(HEADER): f"Bearer {SENTINEL}",
                               "MCP_CONTEXT_COST_STDERR_TAIL_BYTES": str(TAIL)}, **extra)


def cli_measure(out: Path, name: str, *what: str, env: dict | None = None):
    done = run_cli("measure", *what, "--name", name, "--results", str(out / "results"),
                   "--badges", str(out / "badges"), "--timeout", "5", env=env or cli_env())
    assert_no_traceback(done)
    assert (out / "results" / name / "measurement.json").is_file(), done.stdout + done.stderr
    assert (out / "badges" / f"{name}.json").is_file()
    verify = run_cli("verify", str(out / "results" / name / "measurement.json"))
    for secret in (SENTINEL, PASSWORD):
        assert_secret_absent(secret, roots=(out,), texts=(done.stdout, done.stderr, verify.stdout, verify.stderr))
    assert_safe_output(done.stdout + done.stderr + verify.stdout + verify.stderr, "measure's and verify's output")
    return done


@pytest.mark.slow
def test_cli_never_prints_or_writes_a_declared_env_value(out, tmp_path):
    describe = cli_measure(out, "cli-describe", "--command", fixture_command("well_behaved", "--describe-env", NAME),
                           "--env", NAME, "--isolation", "host")
    assert describe.returncode == 0 and "cli-describe: measured" in describe.stdout
    assert "redacted" in describe.stdout
    proxies = {"HTTP_PROXY": PROXY, "https_proxy": PROXY, "PIP_INDEX_URL": INDEX}
    for where, status in WHERE:
        proof = tmp_path / f"proof-{where}"
        command = leak_command(where, NAME, "HTTP_PROXY", "PIP_INDEX_URL", proof=proof, api_key=PASSWORD)
        done = cli_measure(out, f"cli-{where}", "--command", command, "--env", NAME, "--isolation", "host",
                           env=cli_env(**proxies))
        assert done.returncode == (0 if status == "measured" else 3), done.stdout + done.stderr
        assert_received(proof, **{NAME: SENTINEL, "HTTP_PROXY": PROXY, "PIP_INDEX_URL": INDEX})
        record = json.loads((out / "results" / f"cli-{where}" / "measurement.json").read_text())
        assert record["status"] == status
        assert f"--api-key {MASK}" in record["launchCommand"]


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


@pytest.mark.slow
def test_shlex_quoted_keys_are_found_too():
    """The launch command is recorded as written: a quoted key is still a key."""
    from harness.probe.redact import Secrets

    command = shlex.join(["npx", "srv", "--api-key", PASSWORD])
    assert PASSWORD in Secrets.for_target(Target(name="t", command=command), {}).values
