"""The one URL printer: credentials masked, everything else as written; and verify uses it."""

from __future__ import annotations

import contextlib
import io

import pytest

from harness.cli import main
from harness.util.urls import masked, shown

CASES = [
    ("https://alice:hunter2pass@example.com/mcp", "https://***@example.com/mcp", ["alice", "hunter2pass"]),
    ("https://example.com/m.json?api_key=sk-abcdefghij0123&x=1", "https://example.com/m.json?api_key=***&x=1",
     ["sk-abcdefghij0123"]),
    ("http://u:p%40ss%3Aword@127.0.0.1:9/a?token=t0k3n-value&sig=ZZZ999&page=2",
     "http://***@127.0.0.1:9/a?token=***&sig=***&page=2", ["p%40ss%3Aword", "p@ss:word", "t0k3n-value", "ZZZ999"]),
    ("https://host/x?access_token=abc.def.ghi#frag", "https://host/x?access_token=***#frag", ["abc.def.ghi"]),
    ("https://host/x?Password=Secret123&q=public", "https://host/x?Password=***&q=public", ["Secret123"]),
    # the fragment (OAuth's implicit flow), path parameters and path segments carry credentials too
    ("https://host/cb#access_token=FRAGtok3nVALUE&state=1", "https://host/cb#access_token=***&state=1",
     ["FRAGtok3nVALUE"]),
    ("https://host/mcp;token=MATRIXsecret99/sse", "https://host/mcp;token=***/sse", ["MATRIXsecret99"]),
    ("https://host/token/PATHsecret42/mcp", "https://host/token/***/mcp", ["PATHsecret42"]),
    ("https://host/api-key/Pk%2FEnc0ded99/mcp", "https://host/api-key/***/mcp", ["Pk%2FEnc0ded99", "Pk/Enc0ded99"]),
    ("https://actions.example.com/mcp/sk-ak-0123456789abcdefghij/sse", "https://actions.example.com/mcp/***/sse",
     ["sk-ak-0123456789abcdefghij"]),
    # a value that reads as a token whatever its parameter is called, a percent-encoded name
    ("https://host/x?q=ghp_0123456789abcdefghijABCDEF&page=2", "https://host/x?q=***&page=2",
     ["ghp_0123456789abcdefghijABCDEF"]),
    ("https://host/x?tok%65n=ENCnamedVALUE", "https://host/x?tok%65n=***", ["ENCnamedVALUE"]),
    # an IDN host stays as written; its credentials do not
    ("https://u:IDNpassw0rd@bücher.example/mcp?apiKey=CAMELkey1", "https://***@bücher.example/mcp?apiKey=***",
     ["IDNpassw0rd", "CAMELkey1"]),
    # a URL that does not split keeps only its scheme
    ("http://[::1/mcp?token=BADv6secret", "http://***", ["BADv6secret"]),
    ("https://h:99999/x?token=PORTsecret1", "https://***", ["PORTsecret1"]),
]


@pytest.mark.parametrize("url, expected, secrets", CASES)
def test_shown_masks_userinfo_and_credential_values(url, expected, secrets):
    assert shown(url) == expected
    message = f"GET {url} failed; with url: /{url.split('/', 3)[-1]}"
    for secret in secrets:
        assert secret not in masked(message, url)


def test_a_url_without_credentials_is_unchanged():
    for url in ("https://example.com/mcp", "https://example.com/a?page=2&sort=asc", "http://[::1]:8080/x",
                "https://api.example.com/v1/mcp/sse", "https://h.example/docs#section-2", "https://bücher.example/a?lang=de"):
        assert shown(url) == url


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
@pytest.mark.parametrize("url, expected, secrets", CASES[:3])
def test_verify_never_prints_a_url_credential(url, expected, secrets, json_flag):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["verify", *json_flag, url.replace("example.com", "127.0.0.1:9").replace("host/", "127.0.0.1:9/"),
                     "--timeout", "2"])
    text = out.getvalue() + err.getvalue()
    assert code == 2 and "***" in text, text
    for secret in secrets:
        assert secret not in text


def test_audit_prints_a_published_source_through_the_same_printer():
    from harness.audit import published_reader

    for url, expected, _ in CASES:
        assert published_reader.shown(url) == expected


@pytest.mark.parametrize("url, secret", [(url, secrets[-1]) for url, _, secrets in CASES[5:10]])
def test_a_measured_url_credential_is_a_secret_of_the_record(url, secret):
    from harness.probe.redact import Secrets

    assert secret not in Secrets.handed(url=url).text(f"HTTP 404 from {url}; tried {secret}")


def test_the_actions_url_input_and_the_internal_error_line_mask_credentials():
    import argparse

    from harness.action.inputs import InputError, read
    from harness.cli import _subject

    for url in ("ftp://alice:FTPpassw0rd@h.example/x", "ws://h.example/mcp?token=WSsecret99"):
        with pytest.raises(InputError) as caught:
            read({"INPUT_URL": url, "GITHUB_WORKSPACE": "/tmp"})
        text = str(caught.value)
        assert "input 'url' must be an http(s) URL" in text and "***" in text and "passw0rd" not in text \
            and "WSsecret99" not in text, text
    subject = _subject(argparse.Namespace(url="https://u:SUBJsecret1@h.example/mcp#access_token=SUBJfrag22"))
    assert "SUBJsecret1" not in subject and "SUBJfrag22" not in subject and "h.example" in subject


@pytest.mark.slow
@pytest.mark.parametrize("path", ["/token/ab12x/mcp", "/mcp;key=ab12x", "/mcp?sig=ab12x", "/mcp#access_token=ab12x"])
def test_measure_url_prints_and_records_no_credential_from_its_url(tmp_path, path):
    """Even a credential too short to be masked everywhere in a record (5 characters) never appears:
    every line that quotes the endpoint quotes it through the printer."""
    import http.server
    import threading

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the library's name
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"no such endpoint")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}{path}"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(["measure", "--name", "short-secret", "--url", url, "--single", "--timeout", "10",
                  "--results", str(tmp_path / "results")])
    finally:
        server.shutdown()
    written = "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    text = out.getvalue() + err.getvalue() + written
    assert "HTTP 404" in text and "ab12x" not in text, text


def test_a_reference_in_place_of_a_credential_is_shown_as_written():
    for url in ("https://h.example/mcp?key=${API_KEY}&token=${env:TOKEN}", "https://h.example/token/${TOKEN}/mcp",
                "https://h.example/mcp?api_key=$API_KEY"):
        assert shown(url) == url


def test_audit_shows_a_configured_endpoint_through_the_printer():
    from harness.audit.model import HTTP, Entry

    entry = Entry.__new__(Entry)
    entry.transport, entry.url = HTTP, "https://h.example/token/ab12x/mcp#access_token=cd34y"
    assert entry.display_launch() == "https://h.example/token/***/mcp#access_token=***"
