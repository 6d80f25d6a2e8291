"""Tool vectors and cost movement on a real git repository built by real sweeps: fixture servers whose
tools grow, shrink, get heavier and lighter, move both ways at once, fail and recover, and sit at
the edges of the 5 % / 25-token emphasis; then the isolation change (sandbox) in its own test.

Asserted: the vectors the sweeps appended equal the ones ``regen --backfill`` rebuilds from git
(also after the files are deleted); the movement window, held-since, mechanism, per-tool
attribution with the unattributed remainder; emphasis exactly at and just below each threshold;
failures as gaps; a new comparable run at an isolation change; and the capture-index joins.
"""

from __future__ import annotations

import json

import pytest

from harness.audit import changed
from harness.core.counting import count_tools
from harness.probe import isolation
from harness.pages.backfill import backfill
from harness.pages.regen import regen
from tests.db.sweeprepo import git, porcelain
from tests.pages import builders as b
from tests.pages.historyrepo import FAIL, Plan, exact, per_tool, run, tool, total

# Every test here shares ``swept``: six weeks of real sweeps, seconds of CPU.
pytestmark = pytest.mark.slow

D1, D2, D3, D4, D5, D6 = "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26", "2026-02-02", "2026-02-09"
DATES = [D1, D2, D3, D4, D5, D6]
BASE = [tool("search", 6, 2), tool("fetch", 4, 1)]
GROWN = [*BASE, tool("create", 5, 3) | {"version": 2}]  # "2}" merges with the closing bracket: remainder -1
FOUR = [*BASE, tool("a", 2, 1), tool("b", 2, 1)]
THREE = FOUR[:3]
HEAVY = [tool("search", 40, 2), BASE[1]]
LIGHT = [BASE[0], tool("fetch", 1, 1)]
WIDE = [tool("x", 60, 1), tool("y", 60, 1)]
NARROW = [tool("x", 5, 1), tool("y", 5, 1), tool("z", 5, 1)]


def _every(first, then=None, change_at=None, dates=DATES):
    return {d: (then if change_at and d >= change_at else first) for d in dates}


PLAN = Plan(DATES, {
    "grow": _every(BASE, GROWN, D2),
    "shrink": _every(FOUR, THREE, D4),
    "heavy": _every(BASE, HEAVY, D5),
    "flaky": {D1: BASE, D2: FAIL, D3: FAIL, D4: LIGHT, D5: LIGHT, D6: LIGHT},
    "mix": _every(WIDE, NARROW, D3),
    "steady": _every(BASE),
    "relapse": {D1: BASE, D2: FAIL, D3: BASE},
    "never": {D1: FAIL},
    "edge-at": {D1: exact(500), D2: exact(525)},        # +25 tokens = 5.0 %: emphasised
    "edge-down": {D1: exact(500), D2: exact(475)},      # -25 tokens = -5.0 %: emphasised
    "edge-pct": {D1: exact(520), D2: exact(545)},       # +25 tokens = 4.8 %: not
    "edge-tok": {D1: exact(480), D2: exact(504)},       # +24 tokens = 5.0 %: not
})


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = run(tmp_path_factory.mktemp("history") / "repo", PLAN)
    report = json.loads((root / "results/regressions.json").read_text(encoding="utf-8"))
    return root, {entry["server"]: entry for entry in report["servers"]}


def _vector_files(root) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in sorted((root / "results").glob("*/tool-vectors.json"))}


def test_sweeps_commit_their_vectors_and_backfill_rebuilds_them_exactly(swept):
    root, _ = swept
    assert porcelain(root) == ""  # the sweeps committed every file they published, vectors included
    forward = _vector_files(root)
    assert set(forward) == set(PLAN.servers) - {"never"}  # a server that never measured has no vectors
    rebuilt = backfill(root, sorted(PLAN.servers))
    assert rebuilt.skipped == []
    assert {n: h.text().encode() for n, h in rebuilt.vectors.items() if h.vectors} == forward
    lines = {n: len(h.vectors) for n, h in rebuilt.vectors.items()}
    assert lines["steady"] == 1 and lines["relapse"] == 1  # unchanged bytes, and a failure, append nothing
    assert lines["grow"] == 2 and lines["flaky"] == 2 and lines["edge-at"] == 2 and lines["never"] == 0


def test_backfill_restores_deleted_vectors_byte_for_byte_and_twice(swept, tmp_path):
    root, _ = swept
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(root), str(clone))
    before = _vector_files(clone)
    git(clone, "rm", "-q", "results/*/tool-vectors.json")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "drop the vectors")
    from harness.cli import main

    for _ in range(2):
        assert main(["regen", "--root", str(clone), "--backfill"]) == 0
        assert _vector_files(clone) == before
    assert git(clone, "status", "--porcelain", "--", "results/regressions.json", "results/capture-index.json",
               "docs") == ""  # the same published bytes as the forward run


def _breakdown(entry) -> dict[str, tuple[str, int]]:
    return {t["name"]: (t["change"], t["delta"]) for t in entry["breakdown"]["tools"]}


def _check_moved(entry, before, after, tools_before, tools_after, held_sweeps, mechanism):
    assert entry["state"] == "moved"
    assert entry["window"] == {"from": before, "to": after}
    assert entry["heldSince"] == after and entry["heldSweeps"] == held_sweeps
    assert entry["delta"] == total(tools_after) - total(tools_before)
    assert entry["mechanism"] == mechanism
    old, new = per_tool(tools_before), per_tool(tools_after)
    expected = {n: (new.get(n, (0,))[0] - old.get(n, (0,))[0]) for n in {*old, *new} if old.get(n) != new.get(n)}
    assert {n: d for n, (_, d) in _breakdown(entry).items()} == expected
    assert entry["breakdown"]["attributed"] == sum(expected.values())
    assert entry["breakdown"]["unattributed"] == entry["delta"] - sum(expected.values())
    assert entry["breakdownUnavailable"] is None


def test_movement_window_held_since_mechanism_and_attribution(swept):
    root, by = swept
    _check_moved(by["grow"], D1, D2, BASE, GROWN, 5, "more tools")
    assert _breakdown(by["grow"]) == {"create": ("added", per_tool(GROWN)["create"][0])}
    assert by["grow"]["breakdown"]["unattributed"] == total(GROWN) - total(BASE) - per_tool(GROWN)["create"][0] == -1
    assert by["grow"]["heldDays"] == 28 and by["grow"]["latest"]["date"] == D6
    _check_moved(by["shrink"], D3, D4, FOUR, THREE, 3, "fewer tools")
    assert _breakdown(by["shrink"])["b"][0] == "removed"
    _check_moved(by["heavy"], D4, D5, BASE, HEAVY, 2, "heavier tools")
    assert by["heavy"]["breakdown"]["tools"][0]["after"]["descriptionTokens"] - \
        by["heavy"]["breakdown"]["tools"][0]["before"]["descriptionTokens"] == 34
    _check_moved(by["mix"], D2, D3, WIDE, NARROW, 4, "mixed")
    assert by["mix"]["delta"] < 0 and by["mix"]["after"]["toolCount"] == 3
    # The page carries the same table, the remainder as its own row.
    page = (root / "docs/servers/grow.md").read_text(encoding="utf-8")
    section = page.split("## Cost movement", 1)[1]
    tables = b.md_tables(section)
    assert tables[0][0][:5] == ["Tool", "Change", "Before", "After", "Delta"]
    rows = {r[0]: r for r in tables[0][1:]}
    assert rows["create"][1] == "added" and rows["create"][4] == f"{per_tool(GROWN)['create'][0]:+,}"
    assert rows["*unattributed* (belongs to no single tool)"][4] == f"{by['grow']['breakdown']['unattributed']:+,}"
    assert f"between the sweeps of {D1} and {D2}" in section and f"held since {D2} (5 sweeps, 28 days)" in section


def test_failures_are_gaps_never_zeros(swept):
    _, by = swept
    _check_moved(by["flaky"], D1, D4, BASE, LIGHT, 3, "lighter tools")  # the window spans the two failed weeks
    relapse = by["relapse"]
    assert relapse["state"] == "unchanged" and relapse["heldSince"] == D1 and relapse["heldSweeps"] == 2
    assert by["never"]["state"] == "no-comparable-measurement" and by["never"]["latest"] is None


@pytest.mark.parametrize("name, emphasised", [("edge-at", True), ("edge-down", True), ("edge-pct", False),
                                             ("edge-tok", False)])
def test_emphasis_at_its_edges(swept, name, emphasised):
    root, by = swept
    entry = by[name]
    assert entry["state"] == "moved" and entry["emphasised"] is emphasised
    assert abs(entry["delta"]) in (24, 25)
    regressions_md = (root / "results/regressions.md").read_text(encoding="utf-8")
    row = next(line for line in regressions_md.splitlines() if f"[{name}]" in line)
    assert row.startswith("| **[") is emphasised
    assert f"{entry['delta']:+,}" in row


def test_every_comparable_movement_is_listed_and_linked(swept):
    root, by = swept
    text = (root / "results/regressions.md").read_text(encoding="utf-8")
    movements = b.md_tables(text.split("## Movements", 1)[1].split("## ", 1)[0])[0][1:]
    assert len(movements) == sum(1 for e in by.values() if e["state"] == "moved") == 9
    assert "../docs/servers/grow.md#cost-movement" in text
    assert "(regressions.md)" in (root / "results/leaderboard.md").read_text(encoding="utf-8").replace(
        "[cost movement](regressions.md)", "(regressions.md)")
    assert 'href="../results/regressions.md"' in (root / "docs/index.html").read_text(encoding="utf-8")
    assert "](../../results/regressions.md)" in (root / "docs/servers/steady.md").read_text(encoding="utf-8")


def test_capture_index_joins_by_hash(swept):
    root, _ = swept
    index = changed.load_index(root / "results/capture-index.json")
    sha = lambda tools: count_tools(tools).canonicalSha256  # noqa: E731
    behind = changed.join(index, "shrink", sha(FOUR))
    assert (behind.state, behind.server, behind.published, behind.since) == ("behind", "shrink", D1, D4)
    assert behind.delta == total(THREE) - total(FOUR) < 0
    assert changed.describe(behind).startswith(f"shrink: behind — this capture was published {D1}")
    assert f"would save {-behind.delta:,} tokens on every request" in changed.describe(behind)
    grown = changed.join(index, "my-mix", sha(WIDE))
    assert grown.state == "behind" and grown.delta == total(NARROW) - total(WIDE)
    assert changed.describe(grown).startswith("my-mix (published as mix): behind")
    current = changed.join(index, "shrink", sha(THREE))
    assert (current.state, current.since) == ("current", D4)
    assert changed.describe(current) == f"shrink: current — the published capture since {D4} ({total(THREE):,} tokens); nothing to update"
    # BASE was published by several servers: the one it is current for wins, by hash, whatever the label
    shared = changed.join(index, "grow", sha(BASE))
    assert shared.state == "current" and shared.server in ("relapse", "steady")
    assert changed.describe(shared).startswith(f"grow (published as {shared.server}): current")
    assert changed.join(index, "grow", sha([tool("never-published")])).state == "unidentified"
    never = changed.describe(changed.join(index, "x", "0" * 64))
    assert never.startswith("x: unidentified —") and "nothing is claimed" in never


SANDBOX = isolation.resolve_mode("auto") == "sandbox"


@pytest.mark.slow
@pytest.mark.skipif(not SANDBOX, reason="bubblewrap cannot create namespaces here (scripts/setup.sh installs it)")
def test_an_isolation_change_starts_a_new_comparable_run(tmp_path):
    moved = [tool("search", 12, 2), BASE[1], GROWN[2]]
    plan = Plan(DATES[:5], {"iso": {D1: BASE, D2: BASE, D3: GROWN, D4: GROWN, D5: moved},
                            "iso-same": {D1: BASE, D3: BASE}},
                isolation={("iso", D3): "sandbox", ("iso", D4): "sandbox", ("iso", D5): "sandbox",
                           ("iso-same", D3): "sandbox"})
    root = run(tmp_path / "repo", plan, upto=D4)
    by = {e["server"]: e for e in json.loads((root / "results/regressions.json").read_text())["servers"]}
    # BASE → GROWN happened across the isolation change: not a movement of the server.
    assert by["iso"]["state"] == "unchanged" and by["iso"]["series"] == {"isolation": "sandbox", "starts": D3}
    assert by["iso"]["heldSince"] == D3 and by["iso"]["heldSweeps"] == 2
    # Same bytes under a new isolation: a new vector (the isolation is on record) but the same capture.
    vectors = (root / "results/iso-same/tool-vectors.json").read_text().splitlines()[1:-1]
    assert [json.loads(v.rstrip(","))["isolation"] for v in vectors] == ["host", "sandbox"]
    index = changed.load_index(root / "results/capture-index.json")
    assert index["current"]["iso-same"]["date"] == D1
    # The next change inside the sandbox run is a movement, window inside the run.
    commit = run_more(root, plan, D5)
    by = {e["server"]: e for e in json.loads((root / "results/regressions.json").read_text())["servers"]}
    _check_moved(by["iso"], D4, D5, GROWN, moved, 1, "heavier tools")
    assert commit and backfill(root, ["iso", "iso-same"]).vectors["iso"].text() == \
        (root / "results/iso/tool-vectors.json").read_text()
    regen(root)
    assert porcelain(root) == ""


def run_more(root, plan: Plan, date: str) -> str:
    from tests.db.sweeprepo import commit_catalog, head, sweep

    if (root / "servers.yaml").read_text(encoding="utf-8") != plan.catalog(date):
        commit_catalog(root, plan.catalog(date), f"catalog for {date}")
    for name in sorted(plan.servers):
        if date in plan.servers[name]:
            code, _, err = sweep(root, "--date", date, "--only", name, "--isolation",
                                 plan.isolation.get((name, date), "host"), "--commit")
            assert code == 0, err
    return head(root)
