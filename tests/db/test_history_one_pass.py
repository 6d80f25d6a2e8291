"""history.csv read in one pass over every line (``history._all_valid``) gives exactly what the line-by-line
reader gives: the same rows (types included) when every line is valid, and the line-by-line reader's rows and
bad lines whenever one line is not (hostile cells, breaks inside a line, blank lines, a BOM, CRLF)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.core.record import STATUSES
from harness.db import history

HEADER = "date,server,tokens,toolCount,status,isolation"


def _line_by_line(monkeypatch, path):
    with monkeypatch.context() as patched:
        patched.setattr(history, "_all_valid", lambda lines: None)
        return history.read_lenient(path)


def _state(result):
    rows, bad = result
    return [(type(r), r.__dict__) for r in rows], bad


def _same(monkeypatch, path) -> tuple[list, list]:
    one_pass = history.read_lenient(path)
    assert _state(one_pass) == _state(_line_by_line(monkeypatch, path))
    return one_pass


def _synthetic(servers: int, weeks: int) -> list[str]:
    """Rows as sweeps write them: numbered and failed statuses, isolation recorded or not."""
    start = dt.date(2024, 1, 1)
    lines = []
    for s in range(servers):
        for w in range(weeks):
            day = (start + dt.timedelta(weeks=w)).isoformat()
            iso = "" if w < 3 else ("docker" if w % 2 else "host")
            lines.append(f"{day},server-{s:03d},,,timeout,{iso}" if (s + w) % 7 == 0 else
                         f"{day},server-{s:03d},{100 + s * w},{1 + s % 12},{'dynamic' if s % 5 == 0 else 'measured'},{iso}")
    lines.append("2024-01-01,five-cells,10,1,measured")
    return lines


def test_valid_rows_are_read_in_one_pass_as_line_by_line(monkeypatch, tmp_path):
    path = tmp_path / "history.csv"
    lines = _synthetic(40, 30)
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    assert history._all_valid(lines) is not None  # the one-pass read is the one taken
    rows, bad = _same(monkeypatch, path)
    assert len(rows) == len(lines) and bad == []
    assert rows[-1].isolation is None and rows[0].tokens is None and type(rows[1].tokens) is int


@pytest.mark.parametrize("bad", [
    "2026-02-30,srv,1,1,measured,host",  # no such day
    "2026-01-05,srv,,,measured,host",  # a numbered status without numbers
    "2026-01-05,srv,5,1,timeout,host",  # a failure with a number
    "2026-01-05,srv,5,,measured,host",
    "",  # a blank line (skipped, not bad)
    "2026-01-05,srv,01,1,measured,host",
    "2026-01-05,srv,1,1,measured,host,",
    "2026-01-05,Srv,1,1,measured,host",
    "2026-01-05,srv,1,1,Measured,host",
    "2026-01-05,srv,1,1,measured,HOST",
    "2026-01-05,srv,1,1,measured,host\r",  # (the CR a CRLF file ends its lines with is dropped)
    "2026-01-05,s\rv,1,1,measured,host",
    "2026-01-05,srv,1,1,measured,host\u2028",
    "2026-01-05,srv,1,1,measured,host\x85",
    "2026-01-05,srv,1 ,1,measured,host",
    '"2026-01-05",srv,1,1,measured,host',
    "2026-01-05,srv,1٢,1,measured,host",  # a digit of another script
    "２０２６-01-05,srv,1,1,measured,host",
    "2026-01-05,srv,1234567890123456,1,measured,host",
    "\ufeff2026-01-05,srv,1,1,measured,host",
])
@pytest.mark.parametrize("where", [0, 1, -1])
def test_one_bad_line_reads_as_line_by_line(monkeypatch, tmp_path, bad, where):
    path = tmp_path / "history.csv"
    lines = _synthetic(3, 4)
    lines.insert(where if where >= 0 else len(lines), bad)
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8", newline="")
    rows, errors = _same(monkeypatch, path)
    assert len(rows) + len(errors) >= len(lines) - 1


_CELLS = {
    "date": ["2026-01-05", "2026-02-29", "2028-02-29", "2026-13-01", "2026-1-05", "0000-01-01", "9999-12-31", "",
             "２０２６-01-05", "2026-01-05 "],
    "server": ["srv", "a.b_c-d", "0", "-srv", "Srv", "s v", "", "srv\u2028", "ſrv"],
    "count": ["", "0", "7", "01", "999999999999999", "9999999999999999", "-1", "1.0", "٣", "1٣", " 1"],
    "status": [*STATUSES, "Measured", "", "measured "],
    "isolation": [None, "", "host", "sandbox", "docker", "HOST", "host ", "podman"],
}
_CELL_LINE = st.builds(lambda d, s, t, c, st_, iso: ",".join([d, s, t, c, st_] + ([] if iso is None else [iso])),
                       *(st.sampled_from(_CELLS[k]) for k in ("date", "server", "count", "count", "status", "isolation")))
# What str.splitlines or a regex's "^"/"$" might take for a line's end, and digits of other scripts.
_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\ufeff٣２"
_LINE = st.one_of(
    _CELL_LINE,
    st.builds(lambda line, char, at: line[:at % (len(line) + 1)] + char + line[at % (len(line) + 1):],
              _CELL_LINE, st.sampled_from(_BREAKS), st.integers(0, 80)),
    st.text(alphabet=st.sampled_from(list("0123456789-,.abchost\"' " + _BREAKS)), max_size=40),
)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_LINE, max_size=12), crlf=st.booleans(), bom=st.booleans(), final=st.booleans())
def test_any_lines_read_as_line_by_line(monkeypatch, tmp_path, lines, crlf, bom, final):
    path = tmp_path / "history.csv"
    end = "\r\n" if crlf else "\n"
    text = ("\ufeff" if bom else "") + end.join([HEADER, *lines]) + (end if final else "")
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    _same(monkeypatch, path)


def _line_by_line_scan(monkeypatch, body):
    with monkeypatch.context() as patched:
        patched.setattr(history, "_all_valid", lambda lines: None)
        return history._scan(body, 2, "h")


def test_rows_after_reads_new_lines_as_line_by_line(monkeypatch):
    lines = _synthetic(2, 3)
    text = "\n".join(lines) + "\n"
    assert history.rows_after(text, 5) == _line_by_line_scan(monkeypatch, lines)[0] != []
    assert history.rows_after(text.replace("2024-01-08", "2024-02-30", 1), 5) is None


@pytest.mark.parametrize("count", ["1٣", "2２", "1𝟗", "9০"])
@pytest.mark.parametrize("cell", [2, 3])
def test_a_count_with_a_digit_of_another_script_is_a_bad_line(monkeypatch, tmp_path, count, cell):
    """A count is ASCII digits: ``int`` reads "1٣" as 13, so the row would say a number the file does not."""
    path = tmp_path / "history.csv"
    cells = ["2026-01-05", "srv", "10", "1", "measured", "host"]
    cells[cell] = count
    path.write_text("\n".join([HEADER, "2026-01-05,ok,1,1,measured,host", ",".join(cells)]) + "\n", encoding="utf-8")
    rows, bad = _same(monkeypatch, path)
    assert [r.server for r in rows] == ["ok"] and [b.number for b in bad] == [3]
    assert "whole number" in bad[0].problem


_VALID = st.builds(lambda day, server, counts, iso: ",".join([day, server, *counts] + ([] if iso is None else [iso])),
                   st.sampled_from(["2026-01-05", "2028-02-29", "0001-01-01"]), st.sampled_from(["srv", "a.b_c-d", "0"]),
                   st.sampled_from([["7", "1", "measured"], ["0", "0", "dynamic"], ["", "", "timeout"]]),
                   st.sampled_from([None, "", "host", "docker"]))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(lines=st.lists(_VALID, min_size=1, max_size=6), char=st.sampled_from(_BREAKS + "\n"), which=st.integers(0, 5),
       at=st.one_of(st.just(0), st.just(-1), st.integers(0, 40)))
def test_valid_lines_with_one_break_character_read_as_line_by_line(lines, char, which, at):
    """Every line valid but one, holding a character some reader would end a line at: at its start, its end or
    inside (the case the one pass is taken or left on)."""
    line = lines[which % len(lines)]
    at = len(line) if at == -1 else at % (len(line) + 1)
    lines[which % len(lines)] = line[:at] + char + line[at:]
    text = "\n".join(lines) + "\n"
    body = history._lines(text)
    one_pass = history._scan(body, 2, "h")
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(history, "_all_valid", lambda lines: None)
        assert _state(one_pass) == _state(history._scan(body, 2, "h"))
