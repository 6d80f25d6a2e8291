"""history.csv as people and tools actually leave it: a byte-order mark (a spreadsheet's save), CRLF line
ends, no final newline, a carriage return, U+2028, NEL or a form feed inside a line, a bad cell of a
megabyte. A sweep measures and adds its rows; every valid row stays; a bad line is kept with the
very characters it had (once ``str.splitlines`` cut a line at U+2028 and its first half passed as a
row) and reported in a bounded line; a BOM once stopped every sweep before measuring.
"""

from __future__ import annotations

import shutil

import pytest

from harness.db import history
from tests.db.sweeprepo import git, init_repo, catalog_text, sweep, well_behaved

D0, D1 = "2026-11-02", "2026-11-09"
HOST = ("--isolation", "host", "--concurrency", "2")
HEADER = b"date,server,tokens,toolCount,status,isolation\n"
ROW = b"2026-10-26,zeta,100,1,measured,host"  # a valid row of a server no longer swept

BAD = {  # variant: (the file's text after the header, the bad line it holds, or None)
    "bom": (b"\xef\xbb\xbf", None),
    "crlf": (b"CRLF", None),
    "no-final-newline": (b"NOEOL", None),
    "u2028-in-a-cell": (b"", "2026-10-19,zeta,100,1,measured,host\u2028junk".encode()),
    "nel-in-a-cell": (b"", "2026-10-19,ze\u0085ta,100,1,measured,host".encode()),
    "form-feed": (b"", b"2026-10-19,ze\x0cta,100,1,measured,host"),
    "lone-cr": (b"", b"2026-10-19,ze\rta,100,1,measured,host"),
    "huge-cell": (b"", b"2026-10-19,zeta,100,1,measured," + b"x" * 1_000_000),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = init_repo(tmp_path_factory.mktemp("history") / "repo", catalog_text([("alpha", well_behaved(2))]))
    assert sweep(root, "--all", *HOST, "--commit", "--date", D0)[0] == 0
    return root


def _write(root, variant: str) -> bytes:
    prefix, bad = BAD[variant]
    body = (root / "history.csv").read_bytes()[len(HEADER):] + ROW + b"\n" + (bad + b"\n" if bad else b"")
    text = HEADER + body
    if prefix == b"CRLF":
        text = text.replace(b"\n", b"\r\n")
    elif prefix == b"NOEOL":
        text = text.rstrip(b"\n")
    else:
        text = prefix + text
    (root / "history.csv").write_bytes(text)
    git(root, "commit", "-q", "-am", f"history edited: {variant}")
    return text


SWEPT = ("bom", "u2028-in-a-cell", "lone-cr", "huge-cell")  # the rest at the reader's level (CPU)


@pytest.mark.slow
@pytest.mark.parametrize("variant", SWEPT)
def test_a_sweep_adds_its_rows_to_history_as_people_leave_it(template, tmp_path, variant):
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)
    _write(root, variant)

    code, _, err = sweep(root, "--all", *HOST, "--commit", "--date", D1)

    assert code == 0, err
    after = (root / "history.csv").read_bytes()
    rows, bad = history.read_lenient(root / "history.csv")
    keys = {(r.date, r.server) for r in rows}
    assert {(D0, "alpha"), (D1, "alpha"), ("2026-10-26", "zeta")} <= keys
    line = BAD[variant][1]
    if line is None:
        assert bad == [] and "problem" not in err and after.startswith(HEADER)
    else:
        assert [b.text.encode() for b in bad] == [line]  # the same characters, one line
        assert after.endswith(b"\n" + line + b"\n") and ("2026-10-19", "zeta") not in keys
        problems = [p for p in err.splitlines() if p.startswith("problem: history.csv")]
        assert len(problems) == 1 and len(problems[0]) < 400, problems
    assert git(root, "status", "--porcelain") == ""


def test_the_reader_never_splits_a_line_at_a_unicode_line_break(tmp_path):
    path = tmp_path / "history.csv"
    for separator in ("\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"):
        path.write_bytes(HEADER + f"2026-10-19,zeta,1,1,measured,host{separator}2026-10-20,zeta,1,1,measured,host\n"
                         .encode())
        rows, bad = history.read_lenient(path)
        assert rows == [] and len(bad) == 1 and bad[0].number == 2, separator


@pytest.mark.parametrize("variant", sorted(set(BAD) - set(SWEPT)))
def test_the_reader_keeps_rows_and_bad_lines_as_they_are(tmp_path, variant):
    root = tmp_path
    (root / "history.csv").write_bytes(HEADER + b"2026-11-02,alpha,215,2,measured,host\n")
    git_free = _write_plain(root, variant)
    rows, bad = history.read_lenient(root / "history.csv")
    assert {(r.date, r.server) for r in rows} == {("2026-11-02", "alpha"), ("2026-10-26", "zeta")}, git_free
    line = BAD[variant][1]
    assert [b.text.encode() for b in bad] == ([line] if line else [])
    rendered = history.render([r.to_json() for r in rows], bad).encode()
    assert rendered.endswith(b"\n" + line + b"\n") if line else rendered.startswith(HEADER)


def _write_plain(root, variant: str) -> bytes:
    prefix, bad = BAD[variant]
    text = (root / "history.csv").read_bytes() + ROW + b"\n" + (bad + b"\n" if bad else b"")
    text = text.replace(b"\n", b"\r\n") if prefix == b"CRLF" else text.rstrip(b"\n") if prefix == b"NOEOL" \
        else prefix + text
    (root / "history.csv").write_bytes(text)
    return text
