"""The mcp-tokens release asset before it is verified (harness/readings/mcp_tokens.py):
anybody's bytes, so it is downloaded and read bounded in size and time, hashed as it streams, and
every way of not having it is one named line — never a traceback, never a blocked read."""

from __future__ import annotations

import hashlib
import os

import pytest

from harness.readings import mcp_tokens
from tests.audit.served import serving


@pytest.fixture
def small_bound(monkeypatch):
    monkeypatch.setattr(mcp_tokens, "MAX_ASSET_BYTES", 1000)


def _served_asset(monkeypatch, base: str, name: str) -> None:
    monkeypatch.setattr(mcp_tokens, "asset_url", lambda: base + name)


@pytest.mark.timeout(120)
def test_a_download_is_bounded_and_its_failures_are_one_line(tmp_path, monkeypatch, small_bound):
    site = tmp_path / "site"
    site.mkdir()
    (site / "huge.tar.xz").write_bytes(b"x" * 5000)
    (site / "fine.tar.xz").write_bytes(b"y" * 500)
    with serving(site) as base:
        for name, words in (("huge.tar.xz", "larger than 1000 bytes (Content-Length 5000)"), ("missing.tar.xz", "404 Client Error: File not found")):
            _served_asset(monkeypatch, base, name)
            with pytest.raises(mcp_tokens.Unavailable) as caught:
                mcp_tokens.provision(None, tmp_path, expected_sha256="0" * 64)
            text = str(caught.value)
            assert text == f"{mcp_tokens.label()} cannot be obtained here: {base}{name}: {words}", text
        _served_asset(monkeypatch, base, "fine.tar.xz")  # obtained, then refused by the pin, by its digest
        with pytest.raises(mcp_tokens.Unavailable, match=hashlib.sha256(b"y" * 500).hexdigest()):
            mcp_tokens.provision(None, tmp_path, expected_sha256="0" * 64)


@pytest.mark.timeout(60)
def test_a_local_asset_that_is_too_large_or_no_file_is_refused_by_name(tmp_path, small_bound):
    big = tmp_path / "big.tar.xz"
    big.write_bytes(b"z" * 1001)
    with pytest.raises(mcp_tokens.Unavailable, match="big.tar.xz is larger than 1,000 bytes"):
        mcp_tokens.provision(big, tmp_path, expected_sha256="0" * 64)
    fifo = tmp_path / "asset.fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path, tmp_path / "absent.tar.xz"):
        with pytest.raises(mcp_tokens.Unavailable, match=f"cannot be obtained: no release asset at {path}$"):
            mcp_tokens.provision(path, tmp_path, expected_sha256="0" * 64)
    exact = tmp_path / "exact.tar.xz"
    exact.write_bytes(b"z" * 1000)  # at the bound: read and hashed (then refused by the pin)
    with pytest.raises(mcp_tokens.Unavailable, match=hashlib.sha256(b"z" * 1000).hexdigest()):
        mcp_tokens.provision(exact, tmp_path, expected_sha256="0" * 64)
