"""A capture the tokenizer fails on, read back by every path that re-derives: ``verify`` says it
cannot be counted (exit 2, not a mismatch), ``regen`` refuses it by name, and ``regen --backfill``
skips that version of the history with a line instead of failing for good.

Long blank runs are counted exactly (tests/core/test_long_runs.py), so the remaining failure is
simulated: tiktoken's encoder raises what pyo3 raises for a Rust panic (a ``BaseException``) on
one marker text.
"""

from __future__ import annotations

import subprocess

import pytest
import tiktoken

from harness.core.counting import count_tools
from harness.core.jsparse import parse
from harness.probe.build_record import serialize
from tests.db.test_forged_records import _measured, _run, clone, template  # noqa: F401 - fixtures

pytestmark = pytest.mark.slow  # each test regenerates a clone of the whole published database

MARKER = "tokenizer-panics-on-this"
GIT_ENV = {"GIT_COMMITTER_NAME": "x", "GIT_COMMITTER_EMAIL": "x@x", "PATH": "/usr/bin:/bin"}


class PanicException(BaseException):
    """Stands for pyo3_runtime.PanicException (not an Exception)."""


@pytest.fixture
def panics(monkeypatch):
    """Call it to make the tokenizer fail on MARKER from then on (after the record is made)."""
    real = tiktoken.Encoding.encode_ordinary

    def encode_ordinary(self, text):
        if MARKER in text:
            raise PanicException("called `Result::unwrap()` on an `Err` value: RuntimeError(StackOverflow)")
        return real(self, text)

    return lambda: monkeypatch.setattr(tiktoken.Encoding, "encode_ordinary", encode_ordinary)


def _with_marker(path) -> bytes:
    """Rewrite the record at ``path`` so its first tool's description holds MARKER, with every
    figure recounted (a record that re-derives — until the tokenizer fails on it)."""
    original = path.read_bytes()
    record = parse(original.decode("utf-8"))
    record["rawToolsCapture"][0]["description"] = MARKER
    counts = count_tools(record["rawToolsCapture"]).to_json()
    for field in ("totalTokens", "canonicalSha256", "canonicalLength", "toolCount"):
        record[field] = counts[field]
    path.write_text(serialize(record), encoding="utf-8")
    return original


def _commit(root, message):
    subprocess.run(["git", "-C", str(root), "commit", "-qam", message, "--author", "x <x@x>"], check=True, env=GIT_ENV)


def test_verify_says_uncountable_not_mismatch(clone, panics):
    path = _measured(clone)
    _with_marker(path)
    panics()
    code, out, err = _run("verify", str(path))
    assert code == 2 and "rawToolsCapture cannot be counted" in err and "StackOverflow" in err, out + err
    assert "MISMATCH" not in out + err and "Traceback" not in out + err


def test_regen_refuses_it_by_name(clone, panics):
    path = _measured(clone)
    _with_marker(path)
    panics()
    code, out, err = _run("regen", "--root", str(clone))
    assert code == 2 and f"{path}: refused: rawToolsCapture or serverInstructions cannot be counted" in err, out + err


def test_backfill_skips_that_version_and_publishes_the_rest(clone, panics):
    path = _measured(clone)
    original = _with_marker(path)
    _commit(clone, "a version the tokenizer fails on")
    path.write_bytes(original)
    _commit(clone, "back to the counted version")
    panics()
    code, out, err = _run("regen", "--root", str(clone), "--backfill")
    assert code == 0, out + err
    assert "skipped:" in err and "refused: rawToolsCapture or serverInstructions cannot be counted" in err and "Traceback" not in err


def test_instructions_the_tokenizer_fails_on_are_refused_by_name(clone, panics):
    path = _measured(clone)
    record = parse(path.read_text(encoding="utf-8"))
    record["serverInstructions"] = f"use these tools well {MARKER}"
    path.write_text(serialize(record), encoding="utf-8")
    panics()
    code, out, err = _run("regen", "--root", str(clone))
    assert code == 2 and f"{path}: refused: rawToolsCapture or serverInstructions cannot be counted" in err, out + err
    assert "Traceback" not in err
