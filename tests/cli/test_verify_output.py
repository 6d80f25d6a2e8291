"""``verify``'s answer on a terminal: the OK line says
what was checked, then one line per re-derived figure, instead of every figure on one long line."""

from __future__ import annotations

import json
import shutil

from harness.core.jsparse import parse
from harness.core.rederive import rederive
from tests.cli.test_input_errors import cli
from tests.conftest import REPO


def _record_with_side_lists(path):
    """The published memory record with a resources side list (as a fresh measurement has)."""
    from harness.core.side_figures import figure

    record = json.loads((REPO / "results" / "memory" / "measurement.json").read_text(encoding="utf-8"))
    items = [{"uri": "memory://knowledge-graph", "name": "knowledge-graph", "mimeType": "application/json"}]
    record["sideLists"] = {"method": "side-lists/v1", "resources": {**figure(items), "pages": 1, "rawCapture": items},
                           "resourceTemplates": {**figure([]), "pages": 1, "rawCapture": []}}
    path.write_text(json.dumps(record), encoding="utf-8")


def test_ok_prints_one_line_per_figure_within_100_columns(tmp_path):
    path = tmp_path / "measurement.json"
    _record_with_side_lists(path)
    code, out, err = cli("verify", str(path))
    assert code == 0, out + err
    derived = rederive(parse(path.read_text(encoding="utf-8"))).derived
    lines = out.splitlines()
    assert lines[0] == f"OK {path}: every figure re-derives from the record's own capture"
    assert lines[1:5] == [f"  {field:<15}  {derived[field]}" for field in
                          ("totalTokens", "canonicalSha256", "toolCount", "canonicalLength")]
    assert "  sideLists.resources:" in lines and "  sideLists.resourceTemplates:" in lines
    at = lines.index("  sideLists.resources:")
    assert lines[at + 3] == f"    canonicalSha256  {derived['sideLists.resources.canonicalSha256']}"
    assert len(lines) == 1 + len(derived) + 2  # one line per figure, one heading per side list
    assert all(len(line) <= 100 for line in lines[1:]), max(lines[1:], key=len)


def test_json_output_is_unchanged(tmp_path):
    path = tmp_path / "measurement.json"
    shutil.copyfile(REPO / "results" / "memory" / "measurement.json", path)
    code, out, _ = cli("verify", str(path), "--json")
    assert code == 0 and json.loads(out)["ok"] is True


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on exit: a connection is refused


def test_a_url_that_cannot_be_fetched_says_why_in_one_readable_line():
    """The reason is the decisive part of the failure (``harness.db.failure_reason``), as for a sweep —
    not requests' exception chain."""
    for url, reason in ((f"http://127.0.0.1:{_closed_port()}/measurement.json", "connection refused by 127.0.0.1"),
                        ("https://mcp-context-cost.invalid/measurement.json",
                         "cannot resolve host mcp-context-cost.invalid")):
        code, out, err = cli("verify", url)
        assert code == 2 and out == ""
        assert err.strip() == f"cannot verify {url}: cannot fetch: {reason}", err
