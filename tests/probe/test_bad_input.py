"""Bad input: whatever a server or a catalog entry hands the harness, the result
is a recorded status with a note — never a traceback, never a half-written file. The CLI exits 3
for a recorded failure (0 for a measurement) and prints no traceback."""

from __future__ import annotations

import json
import shlex
import stat
import sys
from pathlib import Path

import pytest

from harness.core.canonical import stringify
from harness.core.tokenizer import count
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.probe.helpers import assert_no_traceback, measure_and_write, nothing_left, results_root, run_cli  # noqa: F401

# An unclosed subprocess transport or pipe (a leak the loop reports at garbage collection) fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

# A stdio server whose replies are scripted by argv[1], a JSON object:
#   "start": lines written at start-up; "<method>": lines written when that request arrives
#   (default: a correct reply), "{id}" replaced by the request id; "<method>:after": "exit" or "hang".
# Lines are written as UTF-8 with surrogateescape, so "\udcff" in the spec is the raw byte 0xff.
SCRIPTED = r'''
import json, sys, time

spec = json.loads(sys.argv[1])
out = sys.stdout.buffer
def write(line, rid=None):
    out.write(line.replace("{id}", json.dumps(rid)).encode("utf-8", "surrogateescape") + b"\n"); out.flush()
DEFAULT = {
    "initialize": ['{"jsonrpc":"2.0","id":{id},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},'
                   '"serverInfo":{"name":"scripted","version":"1"}}}'],
    "tools/list": ['{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":"only","inputSchema":{"type":"object"}}]}}'],
}
for line in spec.get("start", []):
    write(line)
if spec.get("start:after") == "exit":
    sys.exit(int(spec.get("exit_code", 0)))
for raw in sys.stdin:
    try:
        req = json.loads(raw)
    except ValueError:
        continue
    if "id" not in req:
        continue
    method = req.get("method")
    for line in spec.get(method, DEFAULT.get(method, [])):
        write(line, req["id"])
    after = spec.get(method + ":after")
    if after == "exit":
        sys.exit(int(spec.get("exit_code", 0)))
    if after == "hang":
        while True:
            time.sleep(1)
'''

NOISE = ["Server starting...", "", "{not json", "[1,2,3]", '{"level":30,"msg":"listening"}', "\x1b[32mready\x1b[0m"]


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    path = tmp_path_factory.mktemp("scripted") / "scripted_server.py"
    path.write_text(SCRIPTED)

    def command(**spec) -> str:
        return shlex.join([sys.executable, str(path), json.dumps(spec)])

    return command


def measure(name: str, command: str, results: Path, timeout: float = 3.0, **kwargs):
    return measure_and_write(Target(name=name, command=command, timeout_seconds=timeout, **kwargs), results)


# --- pages that are not JSON ----------------------------------------------------------------------

def test_noise_only_server_that_exits(scripted, results_root):
    # It reads initialize before answering with noise and exiting, so the harness's write never
    # races the exit and the noise is always read.
    run = measure("noise-exit", scripted(initialize=NOISE, **{"initialize:after": "exit", "exit_code": 2}),
                  results_root)
    rec = run.record
    assert rec["status"] == "startup-failure", run.notes
    assert rec["phase"] == "initialize"
    assert "exit code 2" in run.notes
    assert "5 non-JSON stdout line(s) skipped, e.g. 'Server starting...'" in run.notes  # the blank line is not noise


@pytest.mark.slow
def test_noise_only_server_that_never_answers(scripted, results_root):
    run = measure("noise-hang", scripted(start=NOISE, initialize=NOISE, **{"initialize:after": "hang"}), results_root,
                  timeout=1.0)
    assert run.record["status"] == "timeout", run.notes
    assert "widest budget tried: 2 s" in run.notes
    assert "non-JSON stdout line(s) skipped" in run.notes


@pytest.mark.slow
def test_endless_noise_fails_at_the_noise_bound(scripted, results_root):
    run = measure("noise-flood", scripted(start=["log line"] * 10_050), results_root)
    assert run.record["status"] == "startup-failure", run.notes
    assert "more than 10000 non-JSON stdout lines" in run.notes


@pytest.mark.parametrize("page,status,detail", [
    # a JSON-RPC reply that does not parse arrived: named at once, whatever the server does next
    ('{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":"cut', "malformed-reply",
     "a reply that cannot be read: Unterminated string starting (at char 51)"),
    ('{"jsonrpc":"2.0","id":{id},"result":{"tools":[]}} trailing garbage', "malformed-reply",
     "a reply that cannot be read: Extra data"),
    # not JSON at all: noise, and the exit that follows is the failure
    ("<html><body>502 Bad Gateway</body></html>", "startup-failure", "1 non-JSON stdout line(s) skipped"),
], ids=["truncated", "trailing", "html"])
def test_tools_list_page_that_is_not_json_then_exit(page, status, detail, scripted, results_root):
    run = measure("page-not-json", scripted(**{"tools/list": [page], "tools/list:after": "exit"}), results_root)
    rec = run.record
    assert rec["status"] == status, run.notes
    assert rec["phase"] == "tools/list page 1"
    assert rec["rawToolsCapture"] is None
    assert detail in run.notes
    if status == "malformed-reply":
        # a deterministic defect is not retried (a slow first launch may time out before it)
        assert [a["status"] for a in rec["attempts"]].count("malformed-reply") == 1


@pytest.mark.parametrize("reply,detail,status", [
    ('{"jsonrpc":"2.0","id":{id},"result":"tools"}', "result is a string, not an object", "malformed-reply"),
    ('{"jsonrpc":"2.0","id":{id},"result":null}', "result is null, not an object", "malformed-reply"),
    ('{"jsonrpc":"2.0","id":{id},"error":"boom"}', "error is a string, not an object", "malformed-reply"),
    ('{"jsonrpc":"2.0","id":{id},"result":{"tools":[],"nextCursor":7}}', "nextCursor is a number, not a string", "malformed-reply"),
    ('{"jsonrpc":"2.0","id":{id},"error":{"code":"x","message":null}}', "JSON-RPC error None: None", "startup-failure"),
], ids=["result-string", "result-null", "error-string", "cursor-number", "error-fields"])
def test_malformed_replies_are_recorded_failures(reply, detail, status, scripted, results_root):
    run = measure("malformed", scripted(**{"tools/list": [reply]}), results_root)
    assert run.record["status"] == status, run.notes
    assert detail in run.notes


# --- well-formed but unusual values are measured as they answered ----------------------------------

@pytest.mark.parametrize("tools", [
    '[{"name":"a","description":"lone \\ud800 surrogate"}]',
    '[{"name":"a","n":1e400,"m":-0,"k":1.0}]',
    '[{"name":"a","name":"b","description":"dup"}]',
    '[null, 0, false, "", [], {}]',
], ids=["lone-surrogate", "numbers", "duplicate-key", "primitives"])
def test_unusual_json_values_are_measured_not_crashed(tools, scripted, results_root):
    reply = '{"jsonrpc":"2.0","id":{id},"result":{"tools":' + tools + '}}'
    run = measure("unusual", scripted(**{"tools/list": [reply]}), results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["totalTokens"] == count(stringify(rec["rawToolsCapture"]))
    assert rec["canonicalSha256"] == rec["attempts"][0]["canonicalSha256"]


def test_odd_elements_get_per_tool_entries_the_record_schema_accepts(scripted, results_root):
    # counting keeps a name of 0/false as is and marks elements the JavaScript reference cannot
    # count (null, a non-string description) with a divergence; the record publishes both.
    tools = '[{"name":0,"inputSchema":{}},{"name":false},{"name":{"x":1}},null,{"name":"d","description":7}]'
    reply = '{"jsonrpc":"2.0","id":{id},"result":{"tools":' + tools + '}}'
    run = measure("odd-elements", scripted(**{"tools/list": [reply]}), results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert [t["name"] for t in rec["tools"]] == ["0", "false", '{"x":1}', "(unnamed)", "d"]
    assert "name is not a string in the capture: 0" in rec["tools"][0]["note"]
    assert "note" in rec["tools"][3] and "note" in rec["tools"][4]
    assert all("divergence" not in t for t in rec["tools"])
    assert rec["totalTokens"] == count(stringify(rec["rawToolsCapture"]))


def test_invalid_utf8_in_a_reply_is_measured_with_replacement_characters(scripted, results_root):
    reply = '{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":"bad\udcff\udcfebytes"}]}}'
    run = measure("bad-utf8", scripted(**{"tools/list": [reply]}), results_root)
    assert run.record["status"] == "measured", run.notes
    assert run.record["rawToolsCapture"][0]["name"] == "bad\ufffd\ufffdbytes"


def test_tools_not_an_array(results_root):
    run = measure("tools-object", fixture_command("tools_not_array", "--variant", "object"), results_root)
    assert run.record["status"] == "malformed-reply", run.notes
    assert "tools/list result.tools is an object, not an array" in run.notes


def test_tool_that_is_not_an_object_is_unnamed(results_root):
    run = measure("tool-string", fixture_command("tools_not_array", "--variant", "string"), results_root)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert [t["name"] for t in rec["tools"]] == ["search_issues", "(unnamed)"]
    assert rec["tools"][1]["descriptionTokens"] == rec["tools"][1]["inputSchemaTokens"] == 0


# --- commands that cannot start -------------------------------------------------------------------

@pytest.mark.parametrize("command,named", [
    ("mcp-context-cost-no-such-program --stdio", "command not found on PATH: mcp-context-cost-no-such-program"),
    ("/nonexistent/bin/server --stdio", "command not found or not executable: /nonexistent/bin/server"),
    ("npx 'unbalanced", "cannot split command"),
    ("   ", "empty command"),
], ids=["not-on-path", "absolute", "bad-quotes", "blank"])
def test_command_that_does_not_exist_is_a_spawn_failure(command, named, results_root):
    run = measure("no-command", command, results_root)
    rec = run.record
    assert rec["status"] == "startup-failure", run.notes
    assert rec["phase"] == "spawn"
    assert named in run.notes
    assert all(a["phase"] == "spawn" for a in rec["attempts"])


def test_script_that_is_not_executable_or_has_a_missing_interpreter(tmp_path, results_root):
    plain = tmp_path / "plain.py"
    plain.write_text("print('hi')\n")
    run = measure("not-executable", str(plain), results_root)
    assert run.record["status"] == "startup-failure" and run.record["phase"] == "spawn"
    assert f"not executable: {plain}" in run.notes

    shebang = tmp_path / "shebang"
    shebang.write_text("#!/nonexistent/interpreter\n")
    shebang.chmod(shebang.stat().st_mode | stat.S_IXUSR)
    run = measure("bad-interpreter", str(shebang), results_root)
    assert run.record["status"] == "startup-failure" and run.record["phase"] == "spawn"
    assert f"cannot start {shebang}" in run.notes


# --- the CLI --------------------------------------------------------------------------------------

def cli(tmp: Path, name: str, *what: str):
    done = run_cli("measure", *what, "--name", name, "--results", str(tmp / "results"), "--badges", str(tmp / "badges"),
                   "--timeout", "3")
    assert_no_traceback(done)
    return done


@pytest.mark.slow
def test_cli_exit_codes_and_no_traceback(scripted, results_root):
    tmp = results_root / "cli"
    missing = cli(tmp, "cli-missing", "--command", "mcp-context-cost-no-such-program")  # bad input
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "command not found on PATH: mcp-context-cost-no-such-program" in missing.stderr
    assert not (tmp / "results" / "cli-missing").exists()

    noisy = cli(tmp, "cli-noise", "--command", scripted(start=NOISE, **{"start:after": "exit"}), "--isolation", "host")
    assert noisy.returncode == 3, noisy.stdout + noisy.stderr
    assert "cli-noise: startup-failure" in noisy.stdout

    malformed = cli(tmp, "cli-malformed", "--command", fixture_command("tools_not_array"), "--isolation", "host")
    assert malformed.returncode == 3 and "not an array" in malformed.stdout

    good = cli(tmp, "cli-good", "--command", fixture_command("well_behaved"), "--isolation", "host", "--single")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "cli-good: measured" in good.stdout

    for name in ("cli-noise", "cli-malformed", "cli-good"):
        record = json.loads((tmp / "results" / name / "measurement.json").read_text())
        badge = json.loads((tmp / "badges" / f"{name}.json").read_text())
        assert badge["message"] == (record["status"] if record["totalTokens"] is None else badge["message"])

    bad_name = cli(tmp, "Not A Slug", "--command", fixture_command("well_behaved"))
    assert bad_name.returncode == 2 and "error:" in bad_name.stderr
    assert not (tmp / "results" / "Not A Slug").exists()

    empty = cli(tmp, "cli-empty", "--command", "")
    assert empty.returncode == 2 and "error:" in empty.stderr, empty.stdout + empty.stderr
    assert not (tmp / "results" / "cli-empty").exists()
