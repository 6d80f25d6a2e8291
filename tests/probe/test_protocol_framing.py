"""Framing bytes are not message bytes; a reply that arrived and is refused is named at once; one
behaviour gets one outcome in its own phase; every leniency is a note, and the compatibility line
says which strict clients would reject what a server sends. Published numbers are checked against
node's JSON.stringify of the fixture's bytes (``protocol_helpers.dump``)."""

from __future__ import annotations

import shlex
import sys

import pytest

from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, results_root  # noqa: F401
from tests.probe.protocol_helpers import assert_matches, dump, fixture, sse_server

TS = "Claude Code and other TypeScript-SDK clients would reject it"
PY = "Python-SDK clients would reject it"


def stdio(results, name: str, *flags: str, timeout: float = 20):
    command = shlex.join([sys.executable, str(fixture("framing")), *flags])
    return measure_and_write(Target(name=name, command=command, timeout_seconds=timeout), results)


def http(results, name: str, *flags: str, timeout: float = 20):
    here = sse_server(*flags)
    try:
        return measure_and_write(Target(name=name, url=here.url(), timeout_seconds=timeout), results)
    finally:
        here.stop()


def findings(run) -> list[dict]:
    return run.record["compatibility"]["findings"]


# --- framing: the same bytes measure the same on every transport ----------------------------------

@pytest.mark.parametrize("where", ["first", "every"])
def test_a_byte_order_mark_measures_as_without_it(where, results_root):
    expected = dump(fixture("framing"))
    run = stdio(results_root, f"bom-{where}", "--bom", where)
    assert_matches(run.record, expected)
    assert len(run.record["attempts"]) == 2 and all(a["outcome"] == "listed" for a in run.record["attempts"])
    bom = [f for f in findings(run) if "byte-order mark" in f["what"]]
    assert len(bom) == 1 and bom[0]["rejectedBy"] == ["typescript-sdk", "python-sdk"]
    assert bom[0]["what"] in run.record["notes"]  # every leniency is a note too
    assert "non-JSON stdout line" not in run.notes


@pytest.mark.parametrize("framing", ["sse", "json"])
def test_a_byte_order_mark_on_http_measures_as_without_it(framing, results_root):
    expected = dump(fixture("sse_server"))
    run = http(results_root, f"bom-http-{framing}", "--bom", "--framing", framing)
    assert_matches(run.record, expected)
    what = "an event stream began" if framing == "sse" else "a JSON body began"
    assert [f["rejectedBy"] for f in findings(run) if f["what"].startswith(what)] == [["python-sdk"]]


def test_bytes_that_are_not_utf8_are_read_as_the_typescript_sdk_reads_them(results_root):
    expected = dump(fixture("framing"), "--not-utf8")  # node decodes the dump with U+FFFD, as the TS SDK does
    run = stdio(results_root, "not-utf8", "--not-utf8")
    assert_matches(run.record, expected)
    assert "caf\ufffd notes" in run.record["rawToolsCapture"][0]["description"]
    assert [f["rejectedBy"] for f in findings(run) if "not UTF-8" in f["what"]] == [["python-sdk"]]
    assert run.record["compatibility"]["summary"].startswith(PY)


@pytest.mark.parametrize("framing", ["sse", "json"])
def test_bytes_that_are_not_utf8_over_http_are_read_as_the_typescript_sdk_reads_them(framing, results_root):
    expected = dump(fixture("sse_server"), "--latin1")  # node reads the 0xF4 byte as U+FFFD
    run = http(results_root, f"latin1-{framing}", "--latin1", "--framing", framing)
    assert_matches(run.record, expected)
    assert "r\ufffdadmap" in run.record["rawToolsCapture"][0]["description"]
    assert [f["rejectedBy"] for f in findings(run) if "not UTF-8" in f["what"]] == [["python-sdk"]]


# --- a refused reply is named at once, never silence until the deadline ---------------------------

@pytest.mark.parametrize("flags,detail", [
    (("--deep", "5000"), "nesting deeper than 4096 levels"),
    (("--deep", "100000"), "nesting deeper than 4096 levels"),
    (("--broken-json",), "a reply that cannot be read: Expecting ',' delimiter"),
    (("--bom", "double"), "a reply that cannot be read: Expecting value"),  # the second mark is not framing
])
def test_stdio_reply_refused_is_malformed_reply_at_once(flags, detail, results_root):
    run = stdio(results_root, "refused", *flags, timeout=60)
    rec = run.record
    assert rec["status"] == "malformed-reply", run.notes
    assert detail in run.notes and rec["phase"] == "tools/list page 1"
    assert [a["status"] for a in rec["attempts"]] == ["malformed-reply"]  # not retried, at double budget or at all


def test_http_reply_nested_too_deep_is_malformed_reply_at_once(results_root):
    run = http(results_root, "deep-http", "--deep", "6000", timeout=60)
    rec = run.record
    assert rec["status"] == "malformed-reply", run.notes
    assert "nesting deeper than 4096 levels" in run.notes
    assert [a["status"] for a in rec["attempts"]] == ["malformed-reply"]  # refused when read, not timed out


# --- one behaviour, one outcome, in its own phase -------------------------------------------------

@pytest.mark.parametrize("kind,said", [
    ("bare", "HTTP 400 with an empty body"),
    ("jsonrpc", "HTTP 400 with JSON-RPC error -32600: 'Invalid Request'"),
    ("text", "HTTP 500: 'Internal Server Error'"),
])
def test_a_refused_initialized_notification_is_one_outcome_whatever_its_body(kind, said, results_root):
    expected = dump(fixture("sse_server"))
    run = http(results_root, f"refused-{kind}", "--refuse-initialized", kind)
    assert_matches(run.record, expected)  # measured, as the Python SDK goes on past it
    refusal = [f for f in findings(run) if "refused notifications/initialized" in f["what"]]
    assert refusal == [{"what": f"the server refused notifications/initialized ({said}); this harness went on to "
                                "tools/list as the Python SDK does", "rejectedBy": ["typescript-sdk"]}]
    assert run.record["compatibility"]["summary"].startswith(TS)
    assert refusal[0]["what"] in run.record["notes"]


@pytest.mark.parametrize("status", ["500", "404", "200"])
def test_after_initialize_nothing_is_unreachable(status, results_root):
    run = http(results_root, f"after-init-{status}", "--list-status", status)
    rec = run.record
    assert rec["status"] != "unreachable", run.notes
    assert rec["serverName"] == "sse-fixture" and rec["phase"] == "tools/list page 1"
    if status == "200":  # an answer arrived, and holds no reply: the reply is malformed, not the network
        assert rec["status"] == "malformed-reply" and "not JSON or an event stream" in run.notes
    else:
        assert rec["status"] == "startup-failure" and f"HTTP {status} from" in run.notes
        assert "(after initialize was answered)" in run.notes


# --- compatibility: what strict clients would reject ----------------------------------------------

@pytest.mark.parametrize("kind,rejected,where", [
    ("input-type", ["typescript-sdk"], "page 1 of tools/list does not match the MCP 2025-11-25 schema: "
                                       "result.tools[0].inputSchema.type must be \"object\""),
    ("name-number", ["typescript-sdk", "python-sdk"], "page 1 of tools/list"),
    ("no-server-info", ["typescript-sdk", "python-sdk"], "initialize"),
])
def test_compatibility_names_the_clients_that_reject_a_result(kind, rejected, where, results_root):
    expected = dump(fixture("framing"), "--schema", kind)
    run = stdio(results_root, f"schema-{kind}", "--schema", kind)
    assert_matches(run.record, expected)  # measured as it answered: the number never depends on it
    found = findings(run)
    assert sorted({c for f in found for c in f["rejectedBy"]}) == sorted(rejected), found
    assert found[0]["what"].startswith(where)
    summary = run.record["compatibility"]["summary"]
    assert summary.startswith(TS) and ((PY in summary) == ("python-sdk" in rejected))


def test_a_clean_server_has_a_clean_compatibility_line(results_root):
    run = stdio(results_root, "clean", timeout=20)
    assert run.record["compatibility"]["findings"] == []
    assert run.record["compatibility"]["summary"] == "no strict client rejects what this server sends"
    assert run.record["transport"] == "stdio"


def test_the_compatibility_line_reaches_the_server_page_and_the_action_summary(results_root):
    from harness.action import summary
    from harness.pages import server_provenance
    from harness.pages.board import Row

    run = stdio(results_root, "schema-page", "--schema", "input-type")
    rec = run.record
    line = rec["compatibility"]["summary"]
    section = "\n".join(server_provenance._compatibility(Row(entry=None, status=rec["status"], record=rec)))
    assert section.startswith("## Compatibility with strict clients\n\nClaude Code and other TypeScript")
    assert "rejected by: typescript-sdk" in section and "Checked against: MCP 2025-11-25 schema" in section
    step = summary.render(rec)
    assert "**Compatibility with strict clients:** Claude Code and other TypeScript" in step
    assert summary.text(line) in step


def test_the_compatibility_check_is_bounded_whatever_a_server_sends():
    from harness.core.jsparse import parse
    from harness.probe import compatibility
    from harness.probe.outcome import Capture

    deep = parse('{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"a":{"default":%s}}}}]}'
                 % ("[" * 4000 + "]" * 4000))
    capture = Capture(requested_version="2025-11-25", results=[("tools/list", 1, deep)])
    assert [f.what for f in compatibility.findings(capture)] == [
        "page 1 of tools/list nests deeper than 100 levels and was not checked against either client's types"]
    many = {"tools": [{"name": f"t{i}", "inputSchema": {"type": "string"}} for i in range(50_000)]}
    later = {"tools": [{"name": 7, "inputSchema": {"type": "object"}}]}  # past the bound: never checked
    capture = Capture(requested_version="2025-11-25", results=[("tools/list", p, many) for p in (1, 2)])
    capture.results.append(("tools/list", 3, later))
    part = ("tools/list was checked against both clients' types only in part: the check reads at most 2000 tools "
            "and 1048576 bytes of JSON per launch")
    found = compatibility.findings(capture)
    assert [(f.what, f.rejected_by) for f in found if not f.rejected_by] == [(part, ())]
    assert [f.rejected_by for f in found if f.rejected_by] == [("typescript-sdk",)]


@pytest.mark.parametrize("tools", [
    [{"name": "x", "inputSchema": {"type": "object"}, "icons": [{"src": 1, "sizes": [1] * 10}] * 100_000}],
    [{"name": "x", "inputSchema": {"type": "object"}, "description": "d" * 2_000_000}],
    [{"name": "x", "inputSchema": {"type": "object", "required": [{}] * 400_000}}],
])
@pytest.mark.slow
def test_the_compatibility_check_is_bounded_in_bytes_not_only_tools(tools):
    from harness.probe import compatibility
    from harness.probe.outcome import Capture

    ok = {"name": "ok", "inputSchema": {"type": "object"}}  # checked: inside the bound, before the huge tool
    capture = Capture(requested_version="2025-11-25", results=[("tools/list", 1, {"tools": [ok, *tools]})])
    found = compatibility.findings(capture)
    assert [f.what for f in found] == [
        "tools/list was checked against both clients' types only in part: the check reads at most 2000 tools and "
        "1048576 bytes of JSON per launch"]
    errors = {"tools": [{"name": 7, "inputSchema": {"type": "object"}, "icons": [{"src": 1}] * 20_000}]}
    capture = Capture(requested_version="2025-11-25", results=[("tools/list", 1, errors)])
    assert [f.rejected_by for f in compatibility.findings(capture)] == [("typescript-sdk",), ("python-sdk",)]


@pytest.mark.parametrize("reply", [
    '{"id":2,"result":{"tools":[]}}',                       # no jsonrpc member
    '{"jsonrpc":"1.0","id":2,"result":{"tools":[]}}',       # another version
    '{"jsonrpc":2,"id":2,"error":{"code":-1,"message":"x"}}',
])
@pytest.mark.slow
def test_a_reply_without_jsonrpc_2_is_named_never_a_bare_timeout(reply, results_root, tmp_path):
    script = tmp_path / "near_miss.py"
    script.write_text(
        "import json, sys\n"
        "for raw in sys.stdin:\n"
        "    req = json.loads(raw)\n"
        "    if req.get('method') == 'initialize':\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'protocolVersion': '2025-11-25',"
        " 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'near', 'version': '1'}}}), flush=True)\n"
        "    elif req.get('method') == 'tools/list':\n"
        f"        print({reply!r}, flush=True)\n")
    command = shlex.join([sys.executable, str(script)])
    run = measure_and_write(Target(name="near-miss", command=command, timeout_seconds=2), results_root)
    rec = run.record
    assert rec["status"] == "malformed-reply", run.notes
    assert 'a message shaped like a reply arrived without "jsonrpc": "2.0"' in run.notes
    assert rec["phase"] == "tools/list page 1"
