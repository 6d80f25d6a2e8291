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
]


@pytest.mark.parametrize("url, expected, secrets", CASES)
def test_shown_masks_userinfo_and_credential_values(url, expected, secrets):
    assert shown(url) == expected
    message = f"GET {url} failed; with url: /{url.split('/', 3)[-1]}"
    for secret in secrets:
        assert secret not in masked(message, url)


def test_a_url_without_credentials_is_unchanged():
    for url in ("https://example.com/mcp", "https://example.com/a?page=2&sort=asc", "http://[::1]:8080/x"):
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
