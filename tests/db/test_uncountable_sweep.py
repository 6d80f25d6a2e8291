"""A sweep in which one server's tool list cannot be counted and another's is too large for a
record publishes every healthy server beside them: each hostile one gets its own status
(``uncountable``, ``too-large``) with a small record and a note, and everything written reads back.

Long blank runs (1,000,000 spaces, U+3000) no longer fail at all: they are counted exactly
(tests/core/test_long_runs.py checks the numbers against node). So the tokenizer failure that
remains possible is simulated: tiktoken's encoder raises what pyo3 raises for a Rust panic, a
``BaseException``, on one marker text.
"""

from __future__ import annotations

import pytest
import tiktoken

from harness.core.rederive import refusal
from harness.probe.build_record import MAX_RECORD_TOOLS
from tests.db.sweeprepo import catalog_text, fixture, history_rows, init_repo, records, sweep, well_behaved

MARKER = "tokenizer-panics-on-this"


class PanicException(BaseException):
    """Stands for pyo3_runtime.PanicException (not an Exception)."""


def _entries() -> list[dict]:
    bulky = "bulky_tools"
    return [
        {"name": "spaces", "command": fixture(bulky, "--blank", "20", "--blank-count", "1000000")},
        {"name": "ideographic", "command": fixture(bulky, "--blank", "3000", "--blank-count", "1000000", "--tail", "x")},
        {"name": "panics", "command": fixture(bulky, "--tail", MARKER)},
        {"name": "too-many", "command": fixture(bulky, "--tools", str(MAX_RECORD_TOOLS + 1))},
        {"name": "plain", "command": well_behaved(3)},
        {"name": "plain-two", "command": well_behaved(5)},
    ]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    real = tiktoken.Encoding.encode_ordinary

    def encode_ordinary(self, text):
        if MARKER in text:
            raise PanicException("called `Result::unwrap()` on an `Err` value: RuntimeError(StackOverflow)")
        return real(self, text)

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(tiktoken.Encoding, "encode_ordinary", encode_ordinary)
        root = init_repo(tmp_path_factory.mktemp("uncountable") / "repo", catalog_text(_entries()))
        code, out, err = sweep(root, "--all", "--commit", "--isolation", "host", "--concurrency", "2")
    return root, code, out, err


# Counts two million-character blank runs: seconds of CPU. Fast loop: tests/probe/test_record_bounds.py
# (too-large), tests/db/test_uncountable_readers.py (uncountable read back).
@pytest.mark.slow
def test_each_hostile_server_has_its_status_and_the_healthy_ones_are_published(swept):
    root, code, out, err = swept
    assert code == 0, out + err
    assert "Traceback" not in out + err
    recs = records(root)
    assert {name: rec["status"] for name, rec in recs.items()} == {
        "spaces": "measured", "ideographic": "measured", "panics": "uncountable", "too-many": "too-large",
        "plain": "measured", "plain-two": "measured"}
    assert "StackOverflow" in recs["panics"]["notes"][0] and recs["panics"]["notes"][0].startswith("uncountable: ")
    assert f"{MAX_RECORD_TOOLS + 1 + 1:,} tools" in recs["too-many"]["notes"][0]
    for name in ("panics", "too-many"):
        assert recs[name]["totalTokens"] is None and recs[name]["rawToolsCapture"] is None
        assert (root / "results" / name / "measurement.json").stat().st_size < 64 * 1024
    rows = {row["server"]: row["status"] for row in history_rows(root)}
    assert rows["panics"] == "uncountable" and rows["too-many"] == "too-large" and rows["plain"] == "measured"
    assert "uncountable" in (root / "badges" / "panics.json").read_text()


@pytest.mark.slow
def test_every_record_written_reads_back_and_rederives(swept):
    root = swept[0]
    for path in sorted((root / "results").glob("*/measurement.json")):
        from harness.core.jsparse import parse

        assert refusal(parse(path.read_text(encoding="utf-8")), str(path)) is None
    assert records(root)["spaces"]["canonicalLength"] > 1_000_000
