"""``--changed`` (harness/audit/changed.py; methodology "Capture index", capture-index/v1): the
join by hash into exactly one of behind / current / unidentified, alias printing, reading the index
from a path or a raw URL with a named problem on failure, and ``measure --changed`` end to end on
a fixture server."""

from __future__ import annotations

import json
import socket

import pytest

from harness.audit import changed, published_reader
from harness.cli import main
from harness.pages.regen import regen
from tests.audit.served import serving
from tests.conftest import fixture_command
from tests.pages import builders as b

S = {k: (c * 64) for k, c in {"old": "a", "new": "b", "pin": "c", "same": "d", "cheap": "e", "shared": "f"}.items()}
INDEX = {
    "method": "capture-index/v1",
    "captures": {
        S["old"]: [{"server": "github", "date": "2026-08-19", "totalTokens": 1000, "toolCount": 40}],
        S["new"]: [{"server": "github", "date": "2026-08-26", "totalTokens": 1300, "toolCount": 45}],
        S["pin"]: [{"server": "github-legacy", "date": "2026-07-01", "totalTokens": 900, "toolCount": 30},
                   {"server": "github", "date": "2026-06-01", "totalTokens": 900, "toolCount": 30}],
        S["same"]: [{"server": "memory", "date": "2026-05-04", "totalTokens": 500, "toolCount": 9}],
        S["cheap"]: [{"server": "memory", "date": "2026-05-11", "totalTokens": 500, "toolCount": 9}],
        S["shared"]: [{"server": "fetch", "date": "2026-03-02", "totalTokens": 80, "toolCount": 1},
                      {"server": "fetch-fork", "date": "2026-04-06", "totalTokens": 80, "toolCount": 1}],
    },
    "current": {
        "github": {"canonicalSha256": S["new"], "date": "2026-08-26", "totalTokens": 1300, "toolCount": 45},
        "github-legacy": {"canonicalSha256": S["pin"], "date": "2026-07-01", "totalTokens": 900, "toolCount": 30},
        "memory": {"canonicalSha256": S["cheap"], "date": "2026-05-11", "totalTokens": 500, "toolCount": 9},
        "fetch": {"canonicalSha256": "1" * 64, "date": "2026-09-07", "totalTokens": 70, "toolCount": 1},
        "fetch-fork": {"canonicalSha256": "2" * 64, "date": "2026-09-14", "totalTokens": 95, "toolCount": 1},
    },
}


def test_behind_names_the_exact_delta_and_both_dates():
    c = changed.join(INDEX, "github", S["old"])
    assert (c.state, c.server, c.tokens, c.current_tokens, c.delta, c.published, c.since) == \
        ("behind", "github", 1000, 1300, 300, "2026-08-19", "2026-08-26")
    assert changed.describe(c) == ("github: behind — this capture was published 2026-08-19 (1,000 tokens); moving to "
                                   "the current one, published 2026-08-26 (1,300 tokens), would add 300 tokens to "
                                   "every request")
    zero = changed.join(INDEX, "memory", S["same"])
    assert zero.state == "behind" and zero.delta == 0 and zero.published == "2026-05-04"
    assert changed.describe(zero).endswith("would change no tokens")


def test_behind_that_saves_and_the_tie_breaks_between_servers():
    # Published by both fetch and fetch-fork, current for neither: the label decides, then recency.
    fork = changed.join(INDEX, "fetch-fork", S["shared"])
    assert (fork.server, fork.delta) == ("fetch-fork", 15)
    plain = changed.join(INDEX, "fetch", S["shared"])
    assert (plain.server, plain.delta) == ("fetch", -10)
    assert changed.describe(plain).endswith("would save 10 tokens on every request")
    other = changed.join(INDEX, "my-fetch", S["shared"])
    assert other.server == "fetch-fork" and changed.describe(other).startswith("my-fetch (published as fetch-fork): behind")


def test_current_wins_over_behind_and_aliases_print_both_names():
    c = changed.join(INDEX, "github", S["pin"])  # github once had these bytes; github-legacy has them now
    assert (c.state, c.server, c.since) == ("current", "github-legacy", "2026-07-01")
    assert changed.describe(c) == ("github (published as github-legacy): current — the published capture since "
                                   "2026-07-01 (900 tokens); nothing to update")
    same = changed.join(INDEX, "github", S["new"])
    assert same.state == "current" and changed.describe(same).startswith("github: current")


@pytest.mark.parametrize("sha", ["9" * 64, "", "not-a-hash", S["new"].upper()])
def test_anything_else_is_unidentified_and_claims_nothing(sha):
    c = changed.join(INDEX, "github", sha)
    assert (c.state, c.server, c.delta) == ("unidentified", None, None)
    text = changed.describe(c)
    assert text.startswith("github: unidentified — ") and "nothing is claimed about it" in text
    assert "published as" not in text


def test_labels_are_escaped():
    c = changed.join(INDEX, "evil\x1b[31m\nname\u202e", S["new"])
    text = changed.describe(c)
    assert "\x1b" not in text and "\n" not in text and "\u202e" not in text
    assert text.startswith("evil\\x1b[31m\\nname\\u202e (published as github): current")


def _write(path, document) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_index_from_a_path_and_from_a_raw_url(tmp_path):
    (tmp_path / "results").mkdir()
    _write(tmp_path / "results/capture-index.json", INDEX)
    assert changed.load_index(root=tmp_path) == INDEX  # the local checkout first
    assert published_reader.default_source("results/capture-index.json", tmp_path / "nowhere") == \
        published_reader.PUBLISHED_RAW + "results/capture-index.json"
    with serving(tmp_path) as base:
        assert changed.load_index(base + "results/capture-index.json") == INDEX
        with pytest.raises(published_reader.Unavailable, match=r"capture index could not be read from http://127\.0\.0\.1:\d+/"
                                                        r"results/missing\.json: HTTP 404"):
            changed.load_index(base + "results/missing.json")


def test_every_failure_to_read_the_index_is_a_named_problem(tmp_path, monkeypatch):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    problems = {
        str(tmp_path / "absent.json"): "No such file or directory",
        # the decisive reason (harness.db.failure_reason), never requests' exception chain
        f"http://127.0.0.1:{port}/capture-index.json": "connection refused by 127.0.0.1",
        "https://mcp-context-cost.invalid/capture-index.json": "cannot resolve host mcp-context-cost.invalid",
        _write(tmp_path / "string.json", "x"): "not a valid capture-index document",
        _write(tmp_path / "wrong.json", {**INDEX, "method": "capture-index/v2"}): "not a valid capture-index",
        _write(tmp_path / "sha.json", {**INDEX, "captures": {"XYZ": []}}): "not a valid capture-index",
    }
    (tmp_path / "text.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    problems[str(tmp_path / "text.json")] = "not JSON"
    problems[str(tmp_path / "deep.json")] = "not JSON"
    for source, reason in problems.items():
        with pytest.raises(published_reader.Unavailable) as caught:
            changed.load_index(source)
        assert str(caught.value).startswith(f"capture index could not be read from {source}: ")
        assert reason in caught.value.reason, (source, caught.value.reason)
        assert "Pool(" not in caught.value.reason and "…" not in caught.value.reason
    monkeypatch.setattr(published_reader, "MAX_BYTES", 100)
    with pytest.raises(published_reader.Unavailable, match="larger than 100 bytes"):
        changed.load_index(_write(tmp_path / "big.json", INDEX))
    with serving(tmp_path) as base, pytest.raises(published_reader.Unavailable, match="larger than 100 bytes"):
        changed.load_index(base + "big.json")


def _measure(capsys, root, *args) -> tuple[int, str]:
    code = main(["measure", "--results", str(root / "results"), "--badges", str(root / "badges"),
                 "--isolation", "host", "--single", *args])
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_measure_changed_end_to_end(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    three = fixture_command("well_behaved", "--tools", "3")
    b.write_catalog(root, [b.entry("fx", command=three)])
    code, _ = _measure(capsys, root, "--command", three, "--name", "fx")
    assert code == 0
    regen(root)  # publishes results/capture-index.json with fx's capture as current
    date = json.loads((root / "results/fx/measurement.json").read_text())["measuredAt"][:10]
    code, out = _measure(capsys, root, "--command", three, "--name", "fx", "--changed")
    assert code == 0 and f"changed: fx: current — the published capture since {date}" in out
    index = root / "results/capture-index.json"
    with serving(root / "results") as base:
        code, out = _measure(capsys, tmp_path / "elsewhere", "--command", three, "--name", "mine", "--changed",
                             "--index", base + "capture-index.json")
    assert code == 0 and "changed: mine (published as fx): current" in out
    code, out = _measure(capsys, tmp_path / "elsewhere", "--command", fixture_command("well_behaved", "--tools", "4"),
                         "--name", "fx", "--index", str(index))  # --index implies --changed
    assert code == 0 and "changed: fx: unidentified — canonicalSha256" in out
    code, out = _measure(capsys, tmp_path / "elsewhere", "--command", three, "--name", "fx", "--changed",
                         "--index", str(tmp_path / "no-index.json"))
    assert code == 0 and f"changed: capture index could not be read from {tmp_path / 'no-index.json'}" in out
    code, out = _measure(capsys, tmp_path / "elsewhere", "--command", fixture_command("jsonrpc_error", "--on", "initialize"),
                         "--name", "broken", "--changed", "--index", str(index))
    assert code == 3 and "changed: no capture to join (status " in out


def test_a_download_that_never_ends_is_cut_at_the_deadline(monkeypatch):
    import http.server
    import threading
    import time

    class Drip(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # a body that never finishes: one byte every 50 ms, for at most 30 s
            self.send_response(200)
            self.end_headers()
            for _ in range(600):
                try:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.05)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Drip)
    server.daemon_threads, server.block_on_close = True, False
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(published_reader, "DEADLINE", 0.5)
    try:
        with pytest.raises(published_reader.Unavailable, match=r"still downloading after 0\.5 s"):
            changed.load_index(f"http://127.0.0.1:{server.server_address[1]}/capture-index.json")
    finally:
        server.shutdown()
        server.server_close()
