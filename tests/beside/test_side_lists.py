"""Resources and prompts side figures (side-lists/v1): listed after tools/list for the
capabilities a server declares, cursors followed (the empty string is a cursor), every fault kept
to that list and never reaching the headline; re-derived by ``verify``; real servers (slow)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.core.counting import count_tools
from harness.core.side_figures import figure, total
from harness.core.tokenizer import count
from harness.probe import build_record as record, side_lists
from harness.probe.measure import measure_sync
from harness.probe.target import Target
from tests.conftest import REPO, fixture_command
from tests.probe.helpers import results_root, nothing_left  # noqa: F401 - module fixtures

RESOURCES = lambda n: [{"uri": "file:///r/%d.txt" % i, "name": "resource %d" % i, "mimeType": "text/plain",  # noqa: E731
                        "description": "Fixture resource number %d — with a non-ASCII dash." % i} for i in range(n)]
TEMPLATES = [{"uriTemplate": "file:///r/{id}.txt", "name": "by id", "description": "Any resource by id."}]
PROMPTS = [{"name": "summarize", "description": "Summarize a resource.",
            "arguments": [{"name": "uri", "description": "Which resource", "required": True}]}]
DEFAULT_TOOLS = None


def _expected(items: list) -> int:
    # Independent of the harness's canonical form: these items hold only strings and booleans,
    # for which Python's compact json.dumps and JavaScript's JSON.stringify write the same bytes.
    return count(json.dumps(items, separators=(",", ":"), ensure_ascii=False))


def _run(*flags: str, results=None) -> dict:
    target = Target(name="side", command=fixture_command("side_lists", *flags), timeout_seconds=30)
    rec = record.build(measure_sync(target))
    if results is not None:
        record.write(rec, results)
    return rec


def _headline_unchanged(rec: dict) -> None:
    plain = measure_sync(Target(name="plain", command=fixture_command("well_behaved"), timeout_seconds=30)).capture.tools
    counted = count_tools(plain)
    assert rec["status"] == "measured" and rec["phase"] == "done"
    assert (rec["totalTokens"], rec["canonicalSha256"]) == (counted.totalTokens, counted.canonicalSha256)


def test_every_declared_list_is_counted_and_the_headline_is_untouched():
    rec = _run()
    side = rec["sideLists"]
    assert side["method"] == "side-lists/v1"
    for key, items in (("resources", RESOURCES(3)), ("resourceTemplates", TEMPLATES), ("prompts", PROMPTS)):
        assert side[key]["rawCapture"] == items
        assert side[key]["totalTokens"] == _expected(items) and side[key]["count"] == len(items) and side[key]["pages"] == 1
    assert total(side) == (sum(_expected(i) for i in (RESOURCES(3), TEMPLATES, PROMPTS)), False)
    _headline_unchanged(rec)


@pytest.mark.parametrize("size,pages", [(1, 5), (2, 3), (4, 2)])
def test_cursors_are_followed_and_an_empty_cursor_is_a_cursor(size, pages):
    rec = _run("--resources", "5", "--page-size", str(size))
    resources = rec["sideLists"]["resources"]
    assert resources["pages"] == pages and resources["rawCapture"] == RESOURCES(5)
    assert resources["totalTokens"] == _expected(RESOURCES(5))


def test_undeclared_lists_are_not_asked_and_method_not_found_is_no_floor():
    rec = _run("--no-prompts", "--no-templates")
    side = rec["sideLists"]
    assert "prompts" not in side and side["resourceTemplates"] == {"error": "JSON-RPC error -32601: Method not found"}
    assert total(side) == (_expected(RESOURCES(3)), False)


@pytest.mark.parametrize("flags,key,words", [
    (("--fail", "prompts/list"), "prompts", "JSON-RPC error -32603: Internal error: prompts/list is broken"),
    (("--repeat-cursor",), "resources", "resources/list: nextCursor 'again' repeated"),
    (("--not-array", "resources/templates/list"), "resourceTemplates", "result.resourceTemplates is not an array"),
    (("--exit-on", "resources/list"), "resources", "exited"),
])
def test_a_broken_list_is_that_list_s_error_only(flags, key, words):
    rec = _run(*flags)
    side = rec["sideLists"]
    assert words in side[key]["error"]
    assert total(side)[1] is True  # a list that did not answer makes the side total a floor
    _headline_unchanged(rec)
    if "--exit-on" in flags:
        assert "not asked: the session had ended" in side["prompts"]["error"]


@pytest.mark.slow
def test_a_list_that_never_answers_is_bounded(monkeypatch):
    monkeypatch.setattr(side_lists, "SIDE_BUDGET_SECONDS", 2.0)
    rec = _run("--hang", "prompts/list")
    assert rec["sideLists"]["prompts"]["error"] == "prompts/list: no answer within the side-list budget of 2 s"
    assert "totalTokens" in rec["sideLists"]["resources"]
    _headline_unchanged(rec)


def test_no_time_left_in_the_launch_means_not_asked():
    import asyncio

    from harness.probe.outcome import Capture

    capture = Capture(requested_version="2025-11-25", capabilities={"prompts": {}})

    async def go():
        step = side_lists.after_tools_until(asyncio.get_running_loop().time() + 1.0)
        await step(None, capture, None)

    asyncio.run(go())
    assert capture.side_lists == {"prompts": {"error": "not asked: no time left in the launch budget"}}


@pytest.mark.slow
def test_verify_rederives_side_figures_and_names_a_tampered_one(results_root):
    rec = _run(results=results_root)
    path = results_root / "side" / "measurement.json"
    done = subprocess.run([sys.executable, "-m", "harness.cli", "verify", str(path), "--json"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    derived = json.loads(done.stdout)["derived"]
    assert derived["sideLists.prompts.totalTokens"] == _expected(PROMPTS)
    assert derived["sideLists.resources.canonicalSha256"] == rec["sideLists"]["resources"]["canonicalSha256"]
    text = path.read_text().replace(f'"totalTokens": {_expected(PROMPTS)},', f'"totalTokens": {_expected(PROMPTS) + 1},')
    path.write_text(text)
    done = subprocess.run([sys.executable, "-m", "harness.cli", "verify", str(path)], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 1 and "MISMATCH sideLists.prompts.totalTokens" in done.stdout


def test_figure_is_the_canonical_count():
    assert figure([]) == {"count": 0, "totalTokens": count("[]"),
                          "canonicalSha256": "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"}
    with pytest.raises(TypeError):
        figure({"resources": []})
    assert total(None) is None and total({"method": "side-lists/v1"}) is None


EVERYTHING_SHA = "e61b2e1761ff2f931d030faf1dc192ca70247e52ff31d8633431b69ba6e00b7e"
UVX = 'uvx --with "mcp<2" '
REAL = {
    "everything": ("npx -y @modelcontextprotocol/server-everything@2026.8.18", {"resources", "resourceTemplates", "prompts"}),
    "fetch": (UVX + "mcp-server-fetch==2026.8.18", {"prompts"}),
    "sqlite": (UVX + "mcp-server-sqlite==2025.4.25 --db-path {tmp}/side.db", {"resources", "prompts"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_servers_side_figures_rederive_with_verify(name, tmp_path, results_root):
    command, counted = REAL[name]
    rec = record.build(measure_sync(Target(name=name, command=command.format(tmp=tmp_path), timeout_seconds=120)))
    assert rec["status"] == "measured", rec["notes"]
    side = rec["sideLists"]
    assert {k for k in side if k != "method" and "totalTokens" in side[k]} == counted
    assert all(side[key]["count"] >= 1 and side[key]["count"] == len(side[key]["rawCapture"]) for key in counted)
    path = record.write(rec, results_root)
    done = subprocess.run([sys.executable, "-m", "harness.cli", "verify", str(path), "--json"], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    assert {f"sideLists.{k}.totalTokens" for k in counted} <= set(json.loads(done.stdout)["derived"])
    if name == "everything":  # the headline did not move: the published conformance capture's pair
        # (shared/conformance/published/everything__e61b2e1761ff.json, copied here as two values)
        assert (rec["totalTokens"], rec["canonicalSha256"]) == (1708, EVERYTHING_SHA)
