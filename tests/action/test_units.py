"""The small pieces of the Action: inputs, workflow-command escaping, outputs, the comparison,
the gate, the summary's escaping, the catalog diff."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from harness.action import github
from harness.action.comparison import BaselineError, compare, load
from harness.action.workflow_catalog import changed_entries, main as catalog_main
from harness.action.comparison import evaluate
from harness.action.inputs import Increase, InputError, read, split_names
from harness.action.summary import render, text
from tests.action.conftest import parse_outputs
from tests.conftest import REPO


def record(tokens: int | None, tools: list[tuple[str, int]], status: str = "measured", sha: str = "a" * 64) -> dict:
    return {"server": "demo", "status": status, "totalTokens": tokens,
            "toolCount": None if tokens is None else len(tools),
            "canonicalSha256": sha if tokens is not None else None, "notes": ["a note"],
            "tools": [{"name": n, "tokens": t, "descriptionTokens": 1, "inputSchemaTokens": 1} for n, t in tools]}


def inputs_for(tmp_path: Path, **values: str):
    env = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_COMMAND": "npx -y x"}
    env |= {f"INPUT_{k.upper()}": v for k, v in values.items()}
    return read(env)


# inputs -------------------------------------------------------------------------------------

def test_inputs_both_spellings_and_defaults(tmp_path):
    hyphen = read({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_URL": "https://h/mcp", "INPUT_BASELINE": "b.json",
                   "INPUT_MAX-INCREASE": "10%", "GITHUB_REPOSITORY": "o/My.Server"})
    underscore = read({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_URL": "https://h/mcp", "INPUT_BASELINE": "b.json",
                       "INPUT_MAX_INCREASE": "10%", "GITHUB_REPOSITORY": "o/My.Server"})
    assert hyphen == underscore
    assert hyphen.max_increase == Increase(10.0, True) and hyphen.max_increase.allowed(250) == 25.0
    assert hyphen.name == "my.server" and hyphen.timeout_seconds == 60.0 and hyphen.budget is None
    assert hyphen.baseline == tmp_path / "b.json"
    assert hyphen.badge_path == tmp_path / ".mcp-context-cost" / "badges" / "my.server.json"


def test_inputs_collect_every_problem(tmp_path):
    with pytest.raises(InputError) as caught:
        read({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_ENV": "OK_NAME, bad-name", "INPUT_TIMEOUT": "nan",
              "INPUT_MAX-INCREASE": "5", "INPUT_WORKING-DIRECTORY": "missing"})
    problems = "\n".join(caught.value.problems)
    for words in ("exactly one of", "'bad-name'", "input 'timeout' must be a number", "is not a directory",
                  "needs a 'baseline'"):
        assert words in problems
    assert len(caught.value.problems) == 5


@pytest.mark.parametrize("value, expected", [("1,000", 1000), ("0", 0), ("12_000", 12000)])
def test_budget_forms(tmp_path, value, expected):
    assert inputs_for(tmp_path, budget=value).budget == expected


@pytest.mark.parametrize("value", ["-5", "1e3", "5k", "١٢"])
def test_bad_budgets(tmp_path, value):
    with pytest.raises(InputError):
        inputs_for(tmp_path, budget=value)


def test_split_names():
    assert split_names("A, B\n\nC,A\n") == ("A", "B", "C")


# workflow commands and outputs -----------------------------------------------------------------

def test_escaping_follows_the_workflow_command_rules():
    # Untrusted line breaks are shown as visible escapes first, so the runner's own
    # %0D/%0A never turns them back into a second line of the annotation.
    assert github.escape_data("50%\r\nnext") == "50%25\\r\\nnext"
    assert github.escape_property("a: b, c%") == "a%3A b%2C c%25"
    line = github.command("error", "line one\n::warning::injected", title="t: x, y", file=None)
    assert line == "::error title=t%3A x%2C y::line one\\n::warning::injected"
    assert "\n" not in line
    hostile = github.command("error", "\x1b]52;c;cHduZWQ=\x07 \x9b31m \u202e ##[error]x \ud800", title="\x1b[2J")
    assert hostile == ("::error title=\\x1b[2J::\\x1b]52;c;cHduZWQ=\\x07 \\x9b31m \\u202e #\\x23[error]x \\ud800")


def test_untrusted_text_is_fenced_by_stop_commands():
    out = io.StringIO()
    github.print_untrusted(out, "::error::fake\nok")
    first, fake, ok, last = out.getvalue().splitlines()
    token = first.removeprefix("::stop-commands::")
    assert len(token) == 32 and last == f"::{token}::"
    assert (fake, ok) == ("\\x3a:error::fake", "ok")  # inside the fence, and not a command even outside


def test_outputs_are_multiline_safe(tmp_path):
    path = tmp_path / "out"
    github.write_outputs(str(path), {"a": "1", "b": "two\nlines", "c": ""})
    assert parse_outputs(path.read_text()) == {"a": "1", "b": "two\nlines", "c": ""}
    github.write_outputs("", {"a": "1"})  # a local run without GITHUB_OUTPUT writes nothing


# baseline and gate ---------------------------------------------------------------------------

def test_compare_matches_tools_by_name_and_occurrence():
    before = record(100, [("a", 10), ("b", 20), ("dup", 5), ("gone", 7)], sha="b" * 64)
    after = record(130, [("b", 25), ("a", 10), ("dup", 5), ("dup", 6), ("new", 9)])
    c = compare(before, after)
    assert (c.delta, round(c.percent, 1)) == (30, 30.0)
    assert [(x.name, x.delta) for x in c.added] == [("dup", 6), ("new", 9)]
    assert [(x.name, x.before) for x in c.removed] == [("gone", 7)]
    assert [(x.name, x.before, x.after) for x in c.grown] == [("b", 20, 25)]
    assert not c.shrunk and not c.same_capture


def test_compare_refuses_a_current_record_without_a_number():
    with pytest.raises(BaselineError, match="no token count"):
        compare(record(100, [("a", 1)]), record(None, [], status="timeout"))


def test_load_rejects_non_json_constants(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"totalTokens": NaN}')
    with pytest.raises(BaselineError, match="is not JSON"):
        load(path)


@pytest.mark.parametrize("limit, baseline, now, fails", [
    ("10%", 100, 110, False), ("10%", 100, 111, True), ("0%", 0, 1, True), ("0", 100, 100, False),
    ("5", 100, 106, True), ("12.5%", 8, 9, False),
])
def test_max_increase(tmp_path, limit, baseline, now, fails):
    inputs = inputs_for(tmp_path, baseline="b.json", **{"max-increase": limit})
    comparison = compare(record(baseline, [("a", 1)]), record(now, [("a", 1)]))
    failures = evaluate(record(now, [("a", 1)]), inputs, comparison, None)
    assert [f.title for f in failures] == (["increase above max-increase"] if fails else [])


def test_gate_never_passes_a_comparison_that_did_not_happen(tmp_path):
    inputs = inputs_for(tmp_path, baseline="b.json")
    failures = evaluate(record(10, [("a", 1)]), inputs, None, "baseline b.json does not exist")
    assert [(f.title, f.message) for f in failures] == [
        ("baseline comparison failed", "baseline b.json does not exist")]


def test_gate_budget_is_inclusive_and_unmeasured_fails(tmp_path):
    inputs = inputs_for(tmp_path, budget="10")
    assert evaluate(record(10, []), inputs, None, None) == []
    assert [f.title for f in evaluate(record(11, []), inputs, None, None)] == ["over budget"]
    unmeasured = record(None, [], status="auth-required")
    assert [f.title for f in evaluate(unmeasured, inputs, None, None)] == ["server not measured"]


# summary -------------------------------------------------------------------------------------

def test_summary_escapes_what_a_server_chose():
    hostile = "x | <img src=y> [link](http://z) `code`\n## heading"
    md = render(record(5, [(hostile, 5)]) | {"notes": [hostile]})
    lines = [line for line in md.splitlines() if "heading" in line]
    assert len(lines) == 3  # the breakdown row, the tool-shape row and the note, each one line
    for line in lines:  # every markup character the server sent is backslash-escaped
        assert not re.search(r"(?<!\\)[<>\[\]()`#]", line), line
    assert text(hostile) in md
    assert all(line.count(" | ") <= 4 for line in md.splitlines() if line.startswith("| "))


def test_summary_command_prints_a_record(tmp_path, capsys):
    from harness.action.summary import main

    path = tmp_path / "m.json"
    path.write_text(json.dumps(record(5, [("a", 5)])))
    assert main([str(path), str(tmp_path / "missing.json")]) == 2
    out = capsys.readouterr().out
    assert "| measured | 5 | 1 |" in out and "cannot be read" in out


# catalog helpers -----------------------------------------------------------------------------

@pytest.mark.slow
def test_changed_entries(tmp_path):
    head = tmp_path / "servers.yaml"
    base = (REPO / "servers.yaml").read_text()
    head.write_text(base.replace("server-memory@2026.8.31", "server-memory@2026.9.1")
                    + "\n- name: brand-new\n  command: npx -y brand-new@1.0.0\n")
    assert changed_entries(base, head) == ["memory", "brand-new"]
    assert changed_entries(base, REPO / "servers.yaml") == []
    assert len(changed_entries(None, head)) == len(changed_entries("{not yaml: [", head))


def test_catalog_command_rejects_an_invalid_head(tmp_path, capsys):
    head = tmp_path / "servers.yaml"
    head.write_text("servers:\n- name: Bad Name\n  command: x\n")
    assert catalog_main(["changed", "--base", str(tmp_path / "none.yaml"), "--head", str(head)]) == 2
    assert catalog_main(["reference", str(REPO / "servers.yaml")]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "memory"


def test_load_refuses_a_baseline_whose_figures_do_not_rederive(tmp_path):
    from harness.core.jsparse import parse

    committed = next(p for p in sorted((Path(__file__).resolve().parents[2] / "results").glob("*/measurement.json"))
                     if parse(p.read_text())["status"] == "measured" and parse(p.read_text())["toolCount"] >= 1)
    honest = json.loads(committed.read_text())
    path = tmp_path / "b.json"
    path.write_text(json.dumps(honest))
    assert load(path)["totalTokens"] == honest["totalTokens"]
    for field, value in (("totalTokens", 987654), ("toolCount", 0)):
        path.write_text(json.dumps(honest | {field: value}))
        with pytest.raises(BaselineError, match=f"refused: {field} is "):
            load(path)
    path.write_text(json.dumps(honest | {"tools": [row | {"tokens": 1} for row in honest["tools"]]}))
    with pytest.raises(BaselineError, match=r"refused: tools\[0\]\.tokens is 1"):
        load(path)


def test_load_refuses_a_baseline_that_is_not_a_regular_file(tmp_path):
    with pytest.raises(BaselineError, match="cannot be read: not a regular file"):
        load(Path("/dev/zero"))
