"""history.csv reader (harness/db/history.py) and schemas/history.schema.json agree."""

from __future__ import annotations

import pytest

from harness.db.history import COLUMNS, HistoryError, HistoryRow, by_server, read_history
from harness.util import schemas
from tests.pages import builders as b


def test_reads_rows_and_tolerates_missing_isolation(tmp_path):
    path = b.write_history(tmp_path, ["2026-11-30,memory,2378,9,measured,host",
                                      "2026-11-23,memory,2378,9,measured,",
                                      "2026-11-16,memory,2300,9,measured",
                                      "2026-11-30,linear,,,remote-auth-wall,docker"])
    rows = read_history(path)
    assert rows == [HistoryRow("2026-11-30", "memory", 2378, 9, "measured", "host"),
                    HistoryRow("2026-11-23", "memory", 2378, 9, "measured", None),
                    HistoryRow("2026-11-16", "memory", 2300, 9, "measured", None),
                    HistoryRow("2026-11-30", "linear", None, None, "remote-auth-wall", "docker")]
    assert rows[1].isolation_label == "not recorded"
    for row in rows:
        schemas.check("history", row.to_json())


def test_five_column_header_from_before_isolation(tmp_path):
    path = b.write_history(tmp_path, ["2026-08-03,memory,2378,9,measured"], header="date,server,tokens,toolCount,status")
    assert read_history(path) == [HistoryRow("2026-08-03", "memory", 2378, 9, "measured", None)]


def test_missing_file_is_empty(tmp_path):
    assert read_history(tmp_path / "history.csv") == []


def test_every_bad_line_reported(tmp_path):
    path = b.write_history(tmp_path, ["2026-13-01,memory,1,1,measured,host",
                                      "2026-11-30,Memory,1,1,measured,host",
                                      "2026-11-30,memory,,9,measured,host",
                                      "2026-11-30,memory,5,1,timeout,host",
                                      "2026-11-30,memory,5,1,measured,vm",
                                      "2026-11-30,memory,5,1,sleeping,host",
                                      "2026-11-30,memory,5",
                                      "2026-11-30,memory,5,1,measured,host"])
    with pytest.raises(HistoryError) as info:
        read_history(path)
    assert [e.split(":")[1] for e in info.value.errors] == ["2", "3", "4", "5", "6", "7", "8"]


def test_wrong_header(tmp_path):
    path = b.write_history(tmp_path, [], header="server,date,tokens")
    with pytest.raises(HistoryError, match="header must be"):
        read_history(path)


@pytest.mark.parametrize("row, valid", [
    ({"date": "2026-11-30", "server": "memory", "tokens": 1, "toolCount": 1, "status": "measured", "isolation": "host"}, True),
    ({"date": "2026-11-30", "server": "memory", "tokens": None, "toolCount": None, "status": "timeout", "isolation": None}, True),
    ({"date": "2026-11-30", "server": "memory", "tokens": None, "toolCount": 1, "status": "measured", "isolation": "host"}, False),
    ({"date": "2026-11-30", "server": "memory", "tokens": 4, "toolCount": None, "status": "timeout", "isolation": "host"}, False),
    ({"date": "2026-11-30", "server": "memory", "tokens": 1, "toolCount": 1, "status": "measured", "isolation": "vm"}, False),
    ({"date": "30-11-2026", "server": "memory", "tokens": 1, "toolCount": 1, "status": "measured", "isolation": None}, False),
])
def test_schema_and_reader_agree(tmp_path, row, valid):
    cells = ["" if row[c] is None else str(row[c]) for c in COLUMNS]
    path = b.write_history(tmp_path, [",".join(cells)])
    try:
        schemas.check("history", row)
        schema_ok = True
    except schemas.SchemaViolation:
        schema_ok = False
    try:
        read_history(path)
        reader_ok = True
    except HistoryError:
        reader_ok = False
    assert schema_ok == reader_ok == valid


def test_by_server_sorts_and_keeps_last_of_a_day(tmp_path):
    rows = [HistoryRow("2026-11-30", "a", 2, 1, "measured", "host"),
            HistoryRow("2026-11-23", "a", 1, 1, "measured", "host"),
            HistoryRow("2026-11-30", "a", 3, 1, "measured", "host"),
            HistoryRow("2026-11-30", "b", 9, 1, "measured", None)]
    grouped = by_server(rows)
    assert [(r.date, r.tokens) for r in grouped["a"]] == [("2026-11-23", 1), ("2026-11-30", 3)]
    assert list(grouped) == ["a", "b"]
