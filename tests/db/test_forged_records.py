"""Every path that publishes a record it did not compute re-derives it first: a committed record
whose totalTokens, toolCount, canonicalLength or canonicalSha256 was edited, or that is a symbolic
link, is refused by name (file and field) and nothing is published; and every record committed to
this repository re-derives (what CI checks)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.jsparse import parse
from harness.core.rederive import refusal

REPO = Path(__file__).resolve().parents[2]
# Each test clones the repository and regenerates the whole published database (seconds of CPU);
# the refusals themselves are unit-tested in tests/core/test_rederive_rows.py.
pytestmark = pytest.mark.slow
PUBLISHED_PAGES = ("results/leaderboard.md", "results/leaderboard.csv", "docs/index.html")


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _measured(root: Path) -> Path:
    for path in sorted((root / "results").glob("*/measurement.json")):
        record = parse(path.read_text(encoding="utf-8"))
        if record["status"] == "measured" and record["toolCount"] >= 2:
            return path
    raise AssertionError("no measured record in results/")


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    clone = tmp_path_factory.mktemp("forged") / "template"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    assert _run("regen", "--root", str(clone))[0] == 0  # the pages as this harness makes them
    return clone


@pytest.fixture
def clone(template, tmp_path) -> Path:
    root = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(template), str(root)], check=True)
    for rel in ("results", "docs"):  # the template's regenerated (uncommitted) pages too
        subprocess.run(["cp", "-a", str(template / rel), str(root)], check=True)
    return root


def _edit(path: Path, field: str, new: str) -> str:
    text = path.read_text(encoding="utf-8")
    edited, n = re.subn(rf'^(  "{field}": )([^,\n]+)', lambda m: m.group(1) + new, text, count=1, flags=re.M)
    assert n == 1
    path.write_text(edited, encoding="utf-8")
    return re.search(rf'^  "{field}": ([^,\n]+)', text, re.M).group(1)


FORGERIES = {
    "totalTokens": lambda old: "987654",
    "toolCount": lambda old: str(int(old) + 1),
    "canonicalLength": lambda old: str(int(old) - 1),
    "canonicalSha256": lambda old: '"' + "ab" * 32 + '"',
}


@pytest.mark.parametrize("field", sorted(FORGERIES))
def test_regen_refuses_an_edited_figure_by_file_and_field(clone, field):
    record = _measured(clone)
    before = {rel: (clone / rel).read_bytes() for rel in PUBLISHED_PAGES}
    _edit(record, field, FORGERIES[field](parse(record.read_text())[field]))

    code, out, err = _run("regen", "--root", str(clone))

    assert code == 2, out + err
    lines = [line for line in err.splitlines() if "refused" in line]
    assert len(lines) == 1 and str(record) in lines[0] and f"{field} is " in lines[0], err
    assert {rel: (clone / rel).read_bytes() for rel in PUBLISHED_PAGES} == before
    if field == "totalTokens":
        assert "987,654" not in (clone / "results/leaderboard.md").read_text()


@pytest.mark.slow
def test_regen_backfill_refuses_a_committed_forgery(clone):
    record = _measured(clone)
    _edit(record, "totalTokens", "987654")
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", "forged", "--author", "x <x@x>"], check=True,
                   env={"GIT_COMMITTER_NAME": "x", "GIT_COMMITTER_EMAIL": "x@x", "PATH": "/usr/bin:/bin"})
    code, out, err = _run("regen", "--root", str(clone), "--backfill")
    assert code == 2 and f"{record}: refused: totalTokens is 987654" in err, out + err


def test_regen_refuses_a_record_that_is_a_symbolic_link(clone, tmp_path):
    record = _measured(clone)
    outside = tmp_path / "secret-looking.json"
    outside.write_bytes(record.read_bytes())
    record.unlink()
    record.symlink_to(outside)
    code, out, err = _run("regen", "--root", str(clone))
    assert code == 2 and "is a symbolic link; a database reader never reads through one" in err, out + err
    assert str(outside) not in out + err  # the file it points at is neither read nor quoted


def test_regen_refuses_a_results_folder_that_is_a_symbolic_link(clone, tmp_path):
    record = _measured(clone)
    folder = record.parent
    moved = tmp_path / "moved"
    folder.rename(moved)
    folder.symlink_to(moved)
    code, out, err = _run("regen", "--root", str(clone))
    assert code == 2 and f"results/{folder.name} is a symbolic link" in err, out + err


def test_every_committed_record_rederives():
    """CI's check of the database: each committed measured/dynamic record re-derives exactly, and
    ``verify`` says so."""
    paths = sorted((REPO / "results").glob("*/measurement.json"))
    assert paths
    numbered = 0
    for path in paths:
        record = parse(path.read_text(encoding="utf-8"))
        assert refusal(record, str(path)) is None
        if record["status"] in ("measured", "dynamic"):
            numbered += 1
            code, out, err = _run("verify", str(path))
            assert code == 0 and out.startswith("OK "), out + err
    assert numbered > 0


def _regen_refuses(clone: Path, *needles: str) -> None:
    before = {rel: (clone / rel).read_bytes() for rel in PUBLISHED_PAGES}
    code, out, err = _run("regen", "--root", str(clone))
    assert code == 2, out + err
    for needle in needles:
        assert needle in err, err
    assert {rel: (clone / rel).read_bytes() for rel in PUBLISHED_PAGES} == before


def test_regen_refuses_a_forged_per_tool_row(clone):
    record = _measured(clone)
    text = record.read_text(encoding="utf-8")
    forged, n = re.subn(r'("tokens": )(\d+)', lambda m: m.group(1) + str(int(m.group(2)) + 1000), text, count=1)
    assert n == 1
    record.write_text(forged, encoding="utf-8")
    _regen_refuses(clone, f"{record}: refused: tools[0].tokens is ")


@pytest.mark.parametrize("forge", ["message", "color", "link", "fifo"])
def test_regen_refuses_a_badge_its_record_does_not_give(clone, tmp_path, forge):
    import os

    record = _measured(clone)
    badge = clone / "badges" / f"{record.parent.name}.json"
    honest = badge.read_text()
    if forge == "message":
        badge.write_text(re.sub(r'"message": "[^"]*"', '"message": "12 tokens"', honest))
    elif forge == "color":
        badge.write_text(re.sub(r'"color": "[^"]*"', '"color": "brightgreen"', honest).replace("brightgreen", "blue")
                         if '"brightgreen"' in honest else re.sub(r'"color": "[^"]*"', '"color": "brightgreen"', honest))
    elif forge == "link":
        outside = tmp_path / "outside.json"
        outside.write_text(honest)
        badge.unlink()
        badge.symlink_to(outside)
    else:
        badge.unlink()
        os.mkfifo(badge)  # a reader that opened it blocking would hang here
    _regen_refuses(clone, f"badges/{record.parent.name}.json")


@pytest.mark.parametrize("column", ["tokens", "toolCount", "status"])
def test_regen_refuses_a_history_row_that_disagrees_with_its_record(clone, column):
    record = _measured(clone)
    server, date = record.parent.name, str(parse(record.read_text())["measuredAt"])[:10]
    lines = (clone / "history.csv").read_text().splitlines(keepends=True)
    header = lines[0].strip().split(",")
    index = next(i for i, line in enumerate(lines) if line.startswith(f"{date},{server},"))
    cells = lines[index].rstrip("\n").split(",")
    cells[header.index(column)] = {"tokens": "987654", "toolCount": "1", "status": "timeout"}[column]
    if column == "status":
        cells[header.index("tokens")] = cells[header.index("toolCount")] = ""
    lines[index] = ",".join(cells) + "\n"
    (clone / "history.csv").write_text("".join(lines))
    _regen_refuses(clone, f"history.csv: the row {date},{server} says ")


@pytest.mark.parametrize("forge", ["tool tokens", "tool name", "totalTokens"])
def test_regen_refuses_a_newest_tool_vector_that_disagrees_with_its_record(clone, forge):
    record = _measured(clone)
    vectors = record.parent / "tool-vectors.json"
    lines = vectors.read_text().splitlines(keepends=True)
    newest = json.loads(lines[-2].rstrip().rstrip(","))
    if forge == "tool tokens":
        newest["tools"][0][1] += 1000
    elif forge == "tool name":
        newest["tools"][0][0] = "renamed"
    else:
        newest["totalTokens"] += 1
    lines[-2] = json.dumps(newest, separators=(",", ":")) + ("," if lines[-2].rstrip().endswith(",") else "") + "\n"
    vectors.write_text("".join(lines))
    _regen_refuses(clone, "the newest vector does not match")
