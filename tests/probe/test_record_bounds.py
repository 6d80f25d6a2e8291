"""What the harness writes always fits what it reads and what GitHub accepts: a tool list larger
than a record may hold gives a small ``too-large`` record instead, at sizes just under, just over
and far over each bound."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.jsparse import parse
from harness.probe import build_record
from harness.util import bounded
from tests.db.sweeprepo import fixture

GITHUB_FILE_LIMIT = 100 * 1024 * 1024


def _measure(tmp_path: Path, name: str, *args: str) -> tuple[int, dict, Path]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["measure", "--name", name, "--command", fixture("bulky_tools", *args), "--isolation", "host",
                     "--single", "--results", str(tmp_path / "results")])
    path = tmp_path / "results" / name / "measurement.json"
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, parse(path.read_text(encoding="utf-8")), path


def _verify(path: Path) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(["verify", str(path)])


def test_the_written_bound_is_under_the_read_bound_and_githubs():
    assert build_record.MAX_WRITTEN_RECORD_BYTES < bounded.MAX_RECORD_BYTES
    assert build_record.MAX_WRITTEN_RECORD_BYTES <= 50 * 1024 * 1024 < GITHUB_FILE_LIMIT


@pytest.mark.slow
@pytest.mark.parametrize("extra, status", [(build_record.MAX_RECORD_TOOLS - 1, "measured"),
                                           (build_record.MAX_RECORD_TOOLS, "too-large")])
def test_tool_count_just_under_and_just_over(tmp_path, extra, status):
    code, rec, path = _measure(tmp_path, "bulk", "--tools", str(extra))  # the fixture lists extra + 1
    assert rec["status"] == status
    if status == "measured":
        assert code == 0 and rec["toolCount"] == build_record.MAX_RECORD_TOOLS and _verify(path) == 0
    else:
        assert code == 3 and rec["rawToolsCapture"] is None and path.stat().st_size < 64 * 1024
        assert f"listed {build_record.MAX_RECORD_TOOLS + 1:,} tools" in rec["notes"][0]


@pytest.mark.slow
def test_most_of_a_million_tiny_tools_is_a_small_too_large_record(tmp_path):
    """~13 MB in one tools/list reply, under the transport's 16 MiB message bound."""
    code, rec, path = _measure(tmp_path, "million", "--bare", "--tools", "750000")
    assert code == 3 and rec["status"] == "too-large" and path.stat().st_size < 64 * 1024


@pytest.mark.parametrize("zeros, status", [(4_000, "measured"), (12_000, "too-large"),
                                           pytest.param(200_000, "too-large", marks=pytest.mark.slow)])
def test_record_bytes_just_under_just_over_and_far_over(tmp_path, monkeypatch, zeros, status):
    """The byte bound, scaled down so the sizes are quick to make: an enum of zeros is ~2 bytes a
    zero on the wire and ~10 in the record's indented JSON."""
    monkeypatch.setattr(build_record, "MAX_WRITTEN_RECORD_BYTES", 100_000)
    code, rec, path = _measure(tmp_path, "wide", "--enum", str(zeros))
    assert rec["status"] == status
    assert path.stat().st_size <= 100_000
    if status == "too-large":
        assert "over the 100,000 a record may be" in rec["notes"][0] and rec["totalTokens"] is None
        if zeros == 200_000:  # the canonical bytes alone are over: refused before any counting
            assert "bytes of canonical JSON" in rec["notes"][0]
    else:
        assert _verify(path) == 0 and json.loads(path.read_text())["toolCount"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("nest, status", [(100, "measured"), (300, "too-large")])
def test_indentation_of_deep_nesting_counts_toward_the_bound(tmp_path, monkeypatch, nest, status):
    """Scaled down: 600 bytes of nested arrays on the wire are ~180 KB of indented record."""
    monkeypatch.setattr(build_record, "MAX_WRITTEN_RECORD_BYTES", 100_000)
    code, rec, path = _measure(tmp_path, "deep", "--nest", str(nest))
    assert rec["status"] == status and path.stat().st_size <= 100_000
    if status == "too-large":
        assert "bytes of indented JSON in a record" in rec["notes"][0]
    else:
        assert _verify(path) == 0


@pytest.mark.slow
def test_many_deeply_nested_tools_are_too_large_before_the_record_is_built(tmp_path):
    """40 tools of 4,000 nested arrays: 320 KB on the wire, over 1 GB as an indented record, which
    is never built."""
    code, rec, path = _measure(tmp_path, "deeper", "--tools", "39", "--nest", "4000")
    assert code == 3 and rec["status"] == "too-large" and path.stat().st_size < 64 * 1024
    assert "bytes of indented JSON in a record" in rec["notes"][0]
