"""Claude divergence (tools-delta/v1): the projection, the subtraction and the
staleness rule exactly, and the real ``anthropic`` SDK driven against a local count-tokens
endpoint on 127.0.0.1 (request shape, 429 then success, an error row, a missing or wrong key).
The sentinel API key must appear in no output and no file, in any common encoding."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.cli import divergence_cmd
from harness.core.canonical import stringify
from harness.core.jsparse import parse
from harness.core.projection import mapped_tokens, project, projection_text, request_tools, selection_share
from harness.core.tokenizer import count
from harness.readings.claude import MESSAGE, MODEL, ClaudeCounter, CountFailed, MissingKey, tools_delta
from harness.pages.regen import regen
from tests.beside import repo
from tests.conftest import REPO
from tests.fixtures.count_tokens_endpoint import BASE_TOKENS, TOOLS_FRAMING, Endpoint, expected_input_tokens, presented_key

SENTINEL = "sk-ant-test-SENTINEL-0123456789abcdefXYZ"


@pytest.fixture
def endpoint():
    server = Endpoint(SENTINEL)
    yield server
    server.close()


def _parsed(tools: list) -> list:
    return parse(json.dumps(tools))  # as a record is read: JSON.parse semantics (numbers as floats)


# --- the projection, exactly -------------------------------------------------------------------

def test_projection_keeps_three_fields_in_request_order_and_drops_the_rest():
    tools = _parsed([
        {"title": "T", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}},
         "description": "D", "name": "a", "annotations": {"readOnlyHint": True}, "outputSchema": {"type": "object"},
         "execution": {"taskSupport": "optional"}, "icons": [], "_meta": {"x": 1}},
        {"name": "no-description", "inputSchema": {"type": "object"}},
        {"name": "null-description", "description": None, "inputSchema": {}},
        "not an object", None, {"description": "no name"},
    ])
    assert projection_text(tools) == (
        '[{"name":"a","description":"D","input_schema":{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}},'
        '{"name":"no-description","input_schema":{"type":"object"}},'
        '{"name":"null-description","description":null,"input_schema":{}},'
        '{},{},{"description":"no name"}]')
    assert project([]) == [] and projection_text([]) == "[]"
    assert request_tools(tools)[0]["input_schema"]["properties"]["n"]["minimum"] == 1
    assert type(request_tools(tools)[0]["input_schema"]["properties"]["n"]["minimum"]) is int
    assert mapped_tokens(tools) == count(projection_text(tools))
    with pytest.raises(TypeError):
        project({"tools": []})


def test_field_selection_share_and_subtraction_are_exact():
    assert tools_delta(1234, 8) == 1226 and tools_delta(8, 8) == 0
    assert selection_share(26594, 2676) == pytest.approx(1 - 2676 / 26594)
    assert round(selection_share(26594, 2676) * 100, 1) == 89.9  # the spec's xcodebuildmcp figure
    assert selection_share(0, 0) == 0.0 and selection_share(100, 100) == 0.0


def test_projection_of_a_real_published_capture_drops_title_and_annotations():
    record = parse((REPO / "results" / "everything" / "measurement.json").read_text(encoding="utf-8"))
    tools = record["rawToolsCapture"]
    projected = project(tools)
    assert [p["name"] for p in projected] == [t["name"] for t in tools]
    assert all(set(p) <= {"name", "description", "input_schema"} for p in projected)
    assert mapped_tokens(tools) <= record["totalTokens"]


# --- the SDK against the local endpoint --------------------------------------------------------

@pytest.mark.slow
def test_request_shape_and_subtraction_through_the_real_sdk(endpoint, tmp_path):
    records = repo.build(tmp_path)
    counter = ClaudeCounter(api_key=SENTINEL, base_url=endpoint.url)
    rows = divergence_cmd.count_rows(counter, [("alpha", records["alpha"]), ("empty", records["empty"])], "2026-12-01")
    counter.close()
    baseline, with_tools = endpoint.requests  # "empty" needs no request: no tools, nothing added
    for request in endpoint.requests:
        assert request["path"] == "/v1/messages/count_tokens"
        assert presented_key({k.lower(): v for k, v in request["headers"].items()}) == SENTINEL
        assert request["headers"].get("anthropic-version")
        assert request["body"]["model"] == MODEL == "claude-sonnet-4-5-20250929"
        assert request["body"]["messages"] == list(MESSAGE) == [{"role": "user", "content": "x"}]
    assert "tools" not in baseline["body"]
    assert with_tools["body"]["tools"] == json.loads(projection_text(_parsed(repo.TOOLS["alpha"])))
    alpha, empty = rows
    want = expected_input_tokens(with_tools["body"])
    assert alpha == {"server": "alpha", "model": MODEL, "countedAt": "2026-12-01",
                     "canonicalSha256": records["alpha"]["canonicalSha256"],
                     "totalTokens": records["alpha"]["totalTokens"],
                     "mappedTokens": count(projection_text(_parsed(repo.TOOLS["alpha"]))), "toolCount": 2,
                     "withToolsTokens": want, "withoutToolsTokens": BASE_TOKENS, "claudeTokens": want - BASE_TOKENS}
    assert alpha["claudeTokens"] > TOOLS_FRAMING
    assert empty["claudeTokens"] == 0 and empty["withToolsTokens"] == empty["withoutToolsTokens"] == BASE_TOKENS


def test_rate_limit_then_success_is_retried_by_the_sdk(endpoint, tmp_path):
    records = repo.build(tmp_path)
    endpoint.plan = [429, 429]  # the first two answers are rate limits, then it counts
    counter = ClaudeCounter(api_key=SENTINEL, base_url=endpoint.url)
    rows = divergence_cmd.count_rows(counter, [("bravo", records["bravo"])], "2026-12-01")
    counter.close()
    assert len(endpoint.requests) == 4  # 429, 429, baseline, bravo
    assert rows[0]["claudeTokens"] == expected_input_tokens(endpoint.requests[-1]["body"]) - BASE_TOKENS


def test_a_refused_request_is_an_error_row_and_the_others_still_count(endpoint, tmp_path):
    records = repo.build(tmp_path)
    counter = ClaudeCounter(api_key=SENTINEL, base_url=endpoint.url, max_retries=0)
    rows = divergence_cmd.count_rows(counter, [(n, records[n]) for n in ("alpha", "charlie")], "2026-12-01")
    counter.close()
    assert "claudeTokens" in rows[0]
    assert rows[1]["error"] == "HTTP 400: invalid_request_error: tools.0.input_schema: refused on purpose"
    assert "claudeTokens" not in rows[1] and rows[1]["mappedTokens"] == count(projection_text(_parsed(repo.TOOLS["charlie"])))


def test_persistent_failure_of_the_request_without_tools_raises(endpoint):
    endpoint.plan = [500, 500, 500]
    counter = ClaudeCounter(api_key=SENTINEL, base_url=endpoint.url, max_retries=1)
    with pytest.raises(CountFailed) as failed:
        counter.input_tokens()
    counter.close()
    assert failed.value.status == 500 and SENTINEL not in str(failed.value)


def test_missing_key_is_refused_before_any_request(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingKey, match="ANTHROPIC_API_KEY"):
        ClaudeCounter()
    with pytest.raises(MissingKey):
        ClaudeCounter(api_key="   ")


# --- the command, end to end: files, pages, staleness, and the key kept out of everything -------

def _cli(root: Path, env_extra: dict, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | env_extra
    return subprocess.run([sys.executable, "-m", "harness.cli", "divergence", "--root", str(root), *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def _encodings(secret: str) -> list[str]:
    raw = secret.encode()
    return [secret, secret[:len(secret) // 2], secret[len(secret) // 2:], base64.b64encode(raw).decode(),
            base64.urlsafe_b64encode(raw).decode(), raw.hex(), json.dumps(secret)[1:-1], secret[::-1]]


def _assert_nowhere(secret: str, texts: list[str], root: Path) -> None:
    for text in texts:
        for form in _encodings(secret):
            assert form not in text, form
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes().decode("utf-8", errors="replace")
            for form in _encodings(secret):
                assert form not in data, (path, form)


def _claude_cells(root: Path) -> dict[str, str]:
    rows = csv.DictReader(io.StringIO((root / "results/leaderboard.csv").read_text(encoding="utf-8")))
    return {r["server"]: r["claudeTokens"] for r in rows}


@pytest.mark.slow
def test_command_writes_rows_pages_show_current_only_and_the_key_never_leaks(endpoint, tmp_path):
    root = tmp_path / "repo"
    records = repo.build(root)
    env = {"ANTHROPIC_API_KEY": SENTINEL, "ANTHROPIC_BASE_URL": endpoint.url}
    done = _cli(root, env)
    assert done.returncode == 0, done.stderr
    doc = parse((root / "results/divergence.json").read_text(encoding="utf-8"))
    assert doc["method"] == "tools-delta/v1"
    by_name = {r["server"]: r for r in doc["rows"]}
    assert sorted(by_name) == ["alpha", "bravo", "charlie", "empty"]  # delta has no number to count
    assert "error" in by_name["charlie"] and "charlie" in done.stdout and "error" in done.stdout
    alpha = by_name["alpha"]
    assert alpha["canonicalSha256"] == records["alpha"]["canonicalSha256"] and alpha["model"] == MODEL
    assert len(alpha["countedAt"]) == 10

    cells = _claude_cells(root)
    assert cells["alpha"] == str(int(alpha["claudeTokens"])) and cells["charlie"] == "" and cells["delta"] == ""
    page = (root / "docs/servers/alpha.md").read_text(encoding="utf-8")
    assert f"**{int(alpha['claudeTokens']):,} tokens** added to an Anthropic request" in page
    assert "no count on record" in (root / "docs/servers/charlie.md").read_text(encoding="utf-8")
    dashboard = (root / "docs/index.html").read_text(encoding="utf-8")
    assert f'<td class="n claude">{int(alpha["claudeTokens"]):,}</td>' in dashboard
    board = (root / "results/leaderboard.md").read_text(encoding="utf-8")
    assert "On the 1 current row it is " in board or "current rows it ranges from" in board
    _assert_nowhere(SENTINEL, [done.stdout, done.stderr], root)

    # A re-sweep publishes a different capture for alpha: its row goes stale and prints nothing.
    repo.remeasure(root, "alpha", repo.TOOLS["alpha"][:1])
    regen(root)
    assert _claude_cells(root)["alpha"] == "" and _claude_cells(root)["bravo"] != ""
    assert "no count on record" in (root / "docs/servers/alpha.md").read_text(encoding="utf-8")
    assert f'<td class="n claude">{int(alpha["claudeTokens"]):,}</td>' not in (root / "docs/index.html").read_text(encoding="utf-8")
    assert "alpha" in {r["server"] for r in parse((root / "results/divergence.json").read_text())["rows"]}  # kept as data

    # --only recounts alpha's new capture, keeps the other rows, and alpha prints again.
    done = _cli(root, env, "--only", "alpha")
    assert done.returncode == 0, done.stderr
    rows = {r["server"]: r for r in parse((root / "results/divergence.json").read_text())["rows"]}
    assert sorted(rows) == ["alpha", "bravo", "charlie", "empty"]
    assert _claude_cells(root)["alpha"] == str(int(rows["alpha"]["claudeTokens"]))
    _assert_nowhere(SENTINEL, [done.stdout, done.stderr], root)


@pytest.mark.slow
def test_missing_key_says_so_by_name_and_writes_nothing(tmp_path):
    root = tmp_path / "repo"
    repo.build(root)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    done = _cli(root, {})
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in done.stderr and "nothing written" in done.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


@pytest.mark.slow
def test_wrong_key_writes_nothing_and_does_not_echo_it(endpoint, tmp_path):
    root = tmp_path / "repo"
    repo.build(root)
    wrong = "sk-ant-WRONG-key-ffffffffffffffff"
    done = _cli(root, {"ANTHROPIC_API_KEY": wrong, "ANTHROPIC_BASE_URL": endpoint.url})
    assert done.returncode == 1 and "HTTP 401" in done.stderr and "nothing written" in done.stderr
    assert not (root / "results/divergence.json").exists()
    _assert_nowhere(wrong, [done.stdout, done.stderr], root)


def test_top_and_only_choose_servers(tmp_path):
    root = tmp_path / "repo"
    repo.build(root)
    from harness.cli import selection
    catalog, records = selection.load(SimpleNamespace(root=root, catalog="servers.yaml"))
    pool = selection.numbered(records)
    top = selection.choose(catalog, pool, SimpleNamespace(only=None, top=2))
    heaviest = sorted(pool, key=lambda n: (-pool[n]["totalTokens"], n))[:2]
    assert sorted(top) == sorted(heaviest)
    with pytest.raises(LookupError, match="without a published number: delta"):
        selection.choose(catalog, pool, SimpleNamespace(only="delta", top=None))
    with pytest.raises(LookupError, match="not in the catalog: nope"):
        selection.choose(catalog, pool, SimpleNamespace(only="alpha,nope", top=None))


def test_canonical_hash_of_a_row_is_the_capture_it_counted(tmp_path):
    records = repo.build(tmp_path)
    counter = SimpleNamespace(model=MODEL, input_tokens=lambda tools=None: 8 if tools is None else 20)
    row = divergence_cmd.count_row("alpha", records["alpha"], counter, 8, "2026-12-01")
    import hashlib
    assert row["canonicalSha256"] == hashlib.sha256(stringify(records["alpha"]["rawToolsCapture"]).encode()).hexdigest()
    assert row["claudeTokens"] == 12


def test_the_spec_s_field_selection_figure_for_xcodebuildmcp():
    """Spec "Claude divergence", effect 1: xcodebuildmcp 26,594 → 2,676 tokens (89.9%)."""
    import gzip
    import hashlib

    from harness.core.counting import count_tools

    text = gzip.decompress((Path(__file__).parent / "data" / "xcodebuildmcp-tools.json.gz").read_bytes()).decode()
    assert hashlib.sha256(text.encode()).hexdigest() == "f467743f38a30d15da18709c500aa4e22186a755f0e3d2c97966ccd343978a5d"
    tools = parse(text)
    assert count_tools(tools).totalTokens == 26594
    assert mapped_tokens(tools) == 2676
    assert f"{selection_share(26594, 2676) * 100:.1f}%" == "89.9%"
