"""Session-start load of a record (harness/pages/board.py; deferred-load/v1)."""

from __future__ import annotations

from harness.core.canonical import stringify
from harness.core.tokenizer import count
from harness.pages.board import for_record
from tests.pages import builders as b

TOOLS = [b.tool("alpha_tool"), b.tool("beta_tool")]
NAMES = count(stringify(["alpha_tool", "beta_tool"]))


def test_instructions_string_counted_separately_and_summed():
    text = "Use alpha_tool first. Then beta_tool."
    load = for_record(b.measured("s", TOOLS, serverInstructions=text))
    assert (load.names, load.instructions, load.tokens, load.floor) == (NAMES, count(text), NAMES + count(text), False)
    assert load.label() == f"{NAMES + count(text):,}"


def test_null_instructions_count_zero():
    load = for_record(b.measured("s", TOOLS, serverInstructions=None))
    assert (load.names, load.instructions, load.tokens, load.floor) == (NAMES, 0, NAMES, False)
    assert load.label() == str(NAMES)


def test_absent_field_is_a_floor():
    record = b.measured("s", TOOLS, serverInstructions=b.ABSENT)
    assert "serverInstructions" not in record
    load = for_record(record)
    assert (load.names, load.instructions, load.tokens, load.floor) == (NAMES, None, NAMES, True)
    assert load.label() == f"≥ {NAMES}"


def test_exceeds_compares_with_the_headline():
    long = "word " * 500
    record = b.measured("s", TOOLS, serverInstructions=long)
    load = for_record(record)
    assert load.exceeds(record["totalTokens"]) and not for_record(b.measured("s", TOOLS)).exceeds(record["totalTokens"])


def test_no_capture_no_load():
    assert for_record(b.failed("s", "timeout", ["x"])) is None
