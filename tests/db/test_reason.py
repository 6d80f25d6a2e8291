"""One readable reason per failure (harness/db/failure_reason.py): the decisive line, never an
exception repr, never cut — for every kind of note the probe writes."""

from __future__ import annotations

import pytest

from harness.db.failure_reason import decisive, is_environment, reason

NPM_404 = "npm error 404  The requested resource '@pulumi/mcp-server@latest' could not be found or you do not have permission to access it."


@pytest.mark.parametrize("note, expected", [
    # the server's own last stderr line, quoted with either quote, escapes undone
    (f"the server exited before replying (phase: initialize, exit code 1); stderr ends: {NPM_404!r}",
     "npm error 404 The requested resource '@pulumi/mcp-server@latest' could not be found or you do not have "
     "permission to access it."),
    ("the server exited before replying (phase: initialize, exit code 1); stderr ends: 'Invalid number of arguments'",
     "Invalid number of arguments"),
    ("phase: initialize, exit code 1; it said: 'Error: tab\\there and a backslash \\\\ kept'",
     "Error: tab here and a backslash \\ kept"),
    # a note cut before its closing quote keeps what is there
    ("the server exited before replying; stderr ends: \"ModuleNotFoundError: No module named 'bibtexp",
     "ModuleNotFoundError: No module named 'bibtexp"),
    # exception chains from the HTTP client, told the way a person says them
    ("no HTTP answer: ConnectionError: HTTPSConnectionPool(host='mcp.linear.app', port=443): Max retries exceeded "
     "with url: /mcp (Caused by NameResolutionError(\"HTTPSConnection(host='mcp.linear.app', port=443): Failed to "
     "resolve 'mcp.linear.app' ([Errno -2] Name or service not known)\")) (phase: initialize)",
     "cannot resolve host mcp.linear.app"),
    ("no HTTP answer: ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: "
     "/mcp (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f>: Failed to establish a "
     "new connection: [Errno 111] Connection refused')) (phase: initialize)",
     "connection refused by 127.0.0.1"),
    ("no HTTP answer: ConnectTimeout: HTTPSConnectionPool(host='slow.example', port=443): Max retries exceeded with "
     "url: /mcp (Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at 0x7f>, 'Connection to "
     "slow.example timed out. (connect timeout=5)')) (phase: initialize)",
     "connection to slow.example timed out"),
    ("no HTTP answer: SSLError: HTTPSConnectionPool(host='tls.example', port=443): Max retries exceeded with url: / "
     "(Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed'))) "
     "(phase: initialize)",
     "TLS certificate or handshake failed with tls.example"),
    ("no HTTP answer: ConnectionError: HTTPSConnectionPool(host='odd.example', port=443): Max retries exceeded with "
     "url: / (Caused by ProtocolError('Connection aborted.', RemoteDisconnected('Remote end closed connection "
     "without response'))) (phase: initialize)",
     "Remote end closed connection without response"),
    ("npm error network request to https://registry.npmjs.org/x failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org",
     "cannot resolve host registry.npmjs.org"),
    # notes that already say it plainly stay as they are
    ("no answer within 120 s (phase: initialize)", "no answer within 120 s (phase: initialize)"),
    ("JSON-RPC error -32603: fetch failed (phase: tools/list page 1)", "JSON-RPC error -32603: fetch failed (phase: tools/list page 1)"),
    ("HTTP 401 with WWW-Authenticate: Bearer realm=\"x\"", "HTTP 401 with WWW-Authenticate: Bearer realm=\"x\""),
])
def test_decisive_line(note, expected):
    assert decisive(note) == expected


def test_reason_of_a_record():
    failed = {"status": "startup-failure", "notes": ["", "exited with code 1 during initialize", "retried"]}
    assert reason(failed) == "exited with code 1 during initialize"
    assert reason({"status": "measured", "notes": ["tool set differed"]}) == ""
    assert reason({"status": "timeout", "notes": []}) == "timeout"
    assert reason({"status": "unreachable", "notes": None}) == "unreachable"  # a status it has never heard of


def test_environment_evidence_is_the_reason_and_counts_apart():
    rec = {"status": "startup-failure", "notes": ["the server exited before replying; stderr ends: 'boom'"],
           "environmentEvidence": "npm error getaddrinfo EAI_AGAIN registry.npmjs.org"}
    assert is_environment(rec) and reason(rec) == "cannot resolve host registry.npmjs.org"
    assert not is_environment({**rec, "environmentEvidence": "  "})
    assert not is_environment({**rec, "environmentEvidence": None})
    assert not is_environment({k: v for k, v in rec.items() if k != "environmentEvidence"})


def test_a_reason_is_one_line():
    assert decisive("first line\nsecond\tline  ") == "first line second line"
    assert "\n" not in decisive("stderr ends: 'a\\nb'")
