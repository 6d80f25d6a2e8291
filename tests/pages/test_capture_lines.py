"""A server page says when its record's capture was first taken and when a sweep last confirmed
it, and marks a single-launch capture unconfirmed (methodology, "Two launches").

``measuredAt`` is the first capture; confirmations are history.csv rows on or after that day with
the record's status and number.
"""

from __future__ import annotations

import pytest

from harness.pages.regen import regen
from tests.pages import builders as b

TOOLS = [b.tool("lookup", "Look something up.")]
CAPTURED = "2026-11-02T03:04:05.000Z"


def _page(tmp_path, record: dict, history: list[str], validate: bool = True) -> str:
    root = tmp_path / "repo"
    root.mkdir()
    b.write_catalog(root, [b.entry("solo")])
    b.write_record(root, record, validate=validate)
    b.write_history(root, history)
    regen(root)
    return (root / "docs/servers/solo.md").read_text(encoding="utf-8")


def _facts(text: str) -> dict[str, str]:
    return {row[0]: row[1] for row in b.md_tables(text.split("### Measurement record", 1)[1])[0][1:]}


def _measured(**overrides) -> dict:
    return b.measured("solo", TOOLS, measuredAt=CAPTURED, **overrides)


def _tokens() -> int:
    return _measured()["totalTokens"]


def test_captured_and_last_confirmed(tmp_path):
    t = _tokens()
    text = _page(tmp_path, _measured(confirmed=True), [
        f"2026-10-26,solo,{t + 5},1,measured,host",   # before the capture: another number
        f"2026-11-02,solo,{t},1,measured,host",       # the capture's own sweep
        f"2026-11-09,solo,{t},1,measured,host",
        f"2026-11-16,solo,{t},1,measured,host",       # the newest confirmation
    ])
    assert "\nCaptured 2026-11-02, last confirmed 2026-11-16.\n" in text
    facts = _facts(text)
    assert facts["Captured (first taken)"] == CAPTURED and facts["Last confirmed"] == "2026-11-16"
    assert facts["Confirmed by a second launch"] == "yes"
    assert "Unconfirmed" not in text


@pytest.mark.parametrize("rows, expected", [
    ([], "Captured 2026-11-02; not confirmed by a sweep since."),
    (["2026-11-09,solo,,,timeout,host"], "Captured 2026-11-02; not confirmed by a sweep since."),  # a failure
    (["2026-11-09,solo,{other},1,measured,host"], "Captured 2026-11-02; not confirmed by a sweep since."),
    (["2026-10-26,solo,{t},1,measured,host"], "Captured 2026-11-02; not confirmed by a sweep since."),  # older
    (["2026-11-02,solo,{t},1,measured,docker", "2026-11-09,solo,,,timeout,host"],
     "Captured 2026-11-02, last confirmed 2026-11-02."),
])
def test_only_rows_that_say_the_same_confirm(tmp_path, rows, expected):
    t = _tokens()
    text = _page(tmp_path, _measured(confirmed=True), [r.format(t=t, other=t + 1) for r in rows])
    assert f"\n{expected}\n" in text


def test_an_unconfirmed_capture_says_so_on_its_page(tmp_path):
    text = _page(tmp_path, _measured(confirmed=False), [f"2026-11-02,solo,{_tokens()},1,measured,host"])
    assert "**Unconfirmed:** this number comes from a single launch" in text
    assert _facts(text)["Confirmed by a second launch"] == "**no — unconfirmed (single launch)**"
    assert text.index("**Unconfirmed:**") < text.index("### Measurement record")  # up top, under the headline


def test_a_record_from_before_the_field_says_not_on_record(tmp_path):
    text = _page(tmp_path, _measured(), [])
    assert _facts(text)["Confirmed by a second launch"] == "not on record" and "Unconfirmed" not in text


def test_a_failure_is_confirmed_by_rows_of_its_status(tmp_path):
    record = b.failed("solo", "startup-failure", ["exited with code 1 during initialize"], measuredAt=CAPTURED)
    text = _page(tmp_path, record, ["2026-11-09,solo,,,startup-failure,host", "2026-11-16,solo,,,timeout,host"])
    assert "\nCaptured 2026-11-02, last confirmed 2026-11-09.\n" in text
    assert _facts(text)["Confirmed by a second launch"] == "—"


def test_the_budget_row_names_the_published_attempts_budget(tmp_path):
    text = _page(tmp_path, _measured(timeoutMs=120000), [])
    assert _facts(text)["Budget of the published attempt"] == "120,000 ms"
