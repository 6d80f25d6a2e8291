"""Where ``--index`` / ``--tool-shape`` point (harness/audit/published_reader.py): a local path that is no regular
file (a FIFO) is a named problem at once, never a blocked read; a URL's credentials never reach a report,
a terminal or a problem line, in any encoding."""

from __future__ import annotations

import base64
import json
import os
import socket
from urllib.parse import quote

import pytest

from harness.audit import changed, published_reader, suggest
from harness.cli import main
from harness.probe.redact import Secrets
from tests.audit.served import serving

READERS = [("capture index", changed.load_index), ("tool-shape baseline", suggest.load_shape)]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _not_regular(tmp_path):
    fifo = tmp_path / "index.fifo"
    os.mkfifo(fifo)
    linked = tmp_path / "linked.json"
    linked.symlink_to(fifo)
    device = tmp_path / "zero.json"
    device.symlink_to("/dev/zero")
    return {"a FIFO": fifo, "a FIFO behind a symlink": linked, "a character device": device,
            "a directory": tmp_path}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("what, reader", READERS)
def test_a_path_that_is_no_regular_file_is_a_named_problem_at_once(tmp_path, what, reader):
    for kind, path in _not_regular(tmp_path).items():
        looked = published_reader.lookup(str(path), reader)
        assert looked.document is None and looked.source == str(path)
        expected = kind.replace(" behind a symlink", "")
        assert looked.problem == f"{what} could not be read from {path}: not a regular file ({expected})", kind


SECRET, TOKEN = "hunter2-Pa55word", "ghp_" + "Ab1" * 12


def _urls(base: str) -> dict[str, list[str]]:
    """URL → the secrets it carries, in the forms people write them."""
    rest = base.split("://", 1)[1]
    return {
        f"http://reader:{SECRET}@{rest}capture-index.json": [SECRET],
        f"http://{TOKEN}@{rest}capture-index.json": [TOKEN],
        f"http://reader:{quote(SECRET + '/+', safe='')}@{rest}capture-index.json": [SECRET + "/+"],
        f"{base}capture-index.json?token={TOKEN}": [TOKEN],
        f"{base}capture-index.json?ref=main&access_token={SECRET}x": [SECRET + "x"],
        # presigned: the credential's parameter name is no secret-looking word
        f"{base}capture-index.json?X-Amz-Expires=3600&X-Amz-Signature=9f86d081884c7d659a2feaa0c55ad015": [
            "9f86d081884c7d659a2feaa0c55ad015"],
        f"{base}capture-index.json?sig={quote('Zm9v+YmFy/YmF6cXV4=', safe='')}&v=2": ["Zm9v+YmFy/YmF6cXV4="],
    }


def _assert_clean(text: str, secrets: list[str]) -> None:
    found = Secrets(secrets)
    assert not found.found(text), text
    for s in secrets:  # and the forms a reader would try by hand
        for form in (s, quote(s, safe=""), base64.b64encode(s.encode()).decode().rstrip("="), s.encode().hex()):
            assert form not in text


@pytest.mark.parametrize("what, reader", READERS)
def test_credentials_in_an_index_url_never_reach_the_problem_or_the_source(tmp_path, what, reader):
    with serving(tmp_path) as base:  # nothing served there: every URL answers HTTP 404
        cases = _urls(base) | _urls(f"http://127.0.0.1:{_closed_port()}/")
        for url, secrets in cases.items():
            looked = published_reader.lookup(url, reader)
            assert looked.document is None and "***" in looked.source, url
            assert looked.problem.startswith(f"{what} could not be read from {looked.source}: "), looked.problem
            _assert_clean(looked.source + "\n" + looked.problem, secrets)


def test_a_url_without_credentials_is_shown_as_given(tmp_path):
    for url in ("https://raw.githubusercontent.com/o/r/main/results/capture-index.json",
                "http://127.0.0.1:8000/x.json?ref=main&limit=100000&X-Amz-Expires=3600"):
        assert published_reader.shown(url) == url
    assert published_reader.shown(str(tmp_path / "a:b@c.json")) == str(tmp_path / "a:b@c.json")  # a path, not a URL


@pytest.mark.slow  # one measurement of a fixture server per credential-bearing URL
def test_measure_changed_never_prints_an_index_urls_credentials(tmp_path, capsys):
    from tests.conftest import fixture_command

    tools = [{"name": "t", "description": "d", "inputSchema": {"type": "object"}}]
    with serving(tmp_path) as base:
        for url, secrets in _urls(base).items():
            code = main(["measure", "--command", fixture_command("tool_list", "--tools-json", json.dumps(tools)),
                         "--name", "local", "--isolation", "host", "--index", url, "--out", str(tmp_path / "out")])
            out, err = capsys.readouterr()
            assert code == 0, err
            assert "changed: capture index could not be read from" in out and "HTTP 404" in out
            written = "".join(p.read_text(errors="replace") for p in (tmp_path / "out").rglob("*") if p.is_file())
            _assert_clean(out + err + written, secrets)


def _header_drip() -> tuple[socket.socket, str]:
    """A server that answers a status line, then one header line every 0.2 s for a minute: each read
    succeeds, so no per-read timeout ever fires."""
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                for _ in range(300):
                    try:
                        conn.sendall(b"X-Drip: 1\r\n")
                    except OSError:
                        break
                    time.sleep(0.2)

    threading.Thread(target=serve, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/"


@pytest.mark.slow
@pytest.mark.timeout(50)
@pytest.mark.parametrize("what, reader", READERS)
def test_a_server_dripping_its_headers_is_cut_at_the_overall_deadline(monkeypatch, what, reader):
    monkeypatch.setattr(published_reader, "DEADLINE", 1.0)
    listener, base = _header_drip()
    try:
        looked = published_reader.lookup(base + "capture-index.json", reader)
    finally:
        listener.close()
    assert looked.problem == f"{what} could not be read from {base}capture-index.json: still downloading after 1 s"
