"""The rows of history.csv kept in the regen cache (regen_cache.Histories): the same rows as reading the
file whole; a file that starts with the text they were read from has only its new lines read; an edited
file, a bad new line, an entry that is not whole and its own or a cache that cannot be written are read as
without any cache (bad lines refused with the same problems)."""

from __future__ import annotations

import pytest

from harness.db import history
from harness.db.history import HistoryError, read_history
from harness.pages import regen_cache
from tests.pages.test_input_caches import calls

HEADER = "date,server,tokens,toolCount,status,isolation"
ROWS = ["2026-06-01,srv,900,1,measured,host", "2026-06-08,srv,950,1,measured,", "2026-06-01,ok,,,timeout,docker",
        "2026-06-08,ok,40,2,dynamic"]


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "history.csv"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def whole(monkeypatch):
    """How many times the file was read whole."""
    return calls(monkeypatch, history, "read_history")


def kept(tmp_path) -> regen_cache.Histories:
    return regen_cache.Histories(tmp_path / "cache" / "history")


def test_the_kept_rows_are_the_rows_and_a_second_read_is_not_whole(path, tmp_path, whole):
    right = read_history(path)
    assert kept(tmp_path).read(path) == right and kept(tmp_path).read(path) == right
    assert len(whole) == 1


def test_appended_lines_are_read_alone(path, tmp_path, whole, monkeypatch):
    kept(tmp_path).read(path)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("2026-06-15,srv,990,1,measured,host\r\n2026-06-08,srv,1,1,measured,host\n")
    tails: list[str] = []
    real = history.rows_after
    monkeypatch.setattr(history, "rows_after", lambda text, before: tails.append(text) or real(text, before))
    assert kept(tmp_path).read(path) == read_history(path)
    assert tails == ["2026-06-15,srv,990,1,measured,host\r\n2026-06-08,srv,1,1,measured,host\n"] and len(whole) == 1


@pytest.mark.parametrize("edit", ["a row changed", "a row removed", "the file cut short", "no newline at the end"])
def test_an_edited_file_is_read_whole(path, tmp_path, whole, edit):
    kept(tmp_path).read(path)
    text = path.read_text(encoding="utf-8")
    text = {"a row changed": text.replace("900", "901"), "a row removed": text.replace(ROWS[0] + "\n", ""),
            "the file cut short": "".join(text.splitlines(keepends=True)[:3]), "no newline at the end": text.rstrip("\n")}[edit]
    path.write_text(text, encoding="utf-8")
    assert kept(tmp_path).read(path) == read_history(path) and len(whole) == 2


@pytest.mark.parametrize("line", ["2026-06-15,srv,990,1,measured,cloud", "2026-02-30,srv,1,1,measured,host",
                                  "\ufeff2026-06-15,srv,990,1,measured,host", "2026-06-15,srv,,,measured,host"])
def test_a_bad_new_line_is_refused_as_without_a_cache(path, tmp_path, line):
    kept(tmp_path).read(path)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    with pytest.raises(HistoryError) as plain:
        read_history(path)
    with pytest.raises(HistoryError) as cached:
        kept(tmp_path).read(path)
    assert cached.value.errors == plain.value.errors and "history.csv:6:" in plain.value.errors[0]


@pytest.mark.parametrize("plant", ["tampered", "another code", "not rows", "a link"])
def test_a_planted_entry_is_read_whole(path, tmp_path, whole, plant):
    kept(tmp_path).read(path)
    entry = tmp_path / "cache" / "history" / regen_cache.Histories.NAME
    head, _, body = entry.read_bytes().partition(b"\n")
    fields = head.split(b" ")
    lie = body.replace(b"900", b"666")
    summed = regen_cache.hashlib.sha256(lie).hexdigest().encode()
    if plant == "tampered":
        entry.write_bytes(head + b"\n" + lie)
    elif plant == "another code":
        entry.write_bytes(b" ".join([fields[0], b"0" * 64, *fields[2:5], summed]) + b"\n" + lie)
    elif plant == "not rows":
        bad = b'[["2026-06-01","srv"]]'
        entry.write_bytes(b" ".join([*fields[:5], regen_cache.hashlib.sha256(bad).hexdigest().encode()]) + b"\n" + bad)
    else:
        (tmp_path / "elsewhere").write_bytes(b" ".join([*fields[:5], summed]) + b"\n" + lie)
        entry.unlink()
        entry.symlink_to(tmp_path / "elsewhere")
    assert kept(tmp_path).read(path) == read_history(path) and len(whole) == 2


def test_a_cache_that_cannot_be_written_only_costs_time(path, tmp_path, whole):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "history").write_text("a file where the folder goes\n")
    for _ in range(2):
        assert kept(tmp_path).read(path) == read_history(path)
    assert len(whole) == 2


def test_no_file_is_no_rows(tmp_path):
    assert kept(tmp_path).read(tmp_path / "history.csv") == []
