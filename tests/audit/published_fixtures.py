"""Fixture captures, a capture index and a tool-shape baseline for the ``audit --changed`` /
``--suggest`` tests: every tools array is served byte for byte by
``tests/fixtures/servers/tool_list.py``, so each capture's canonicalSha256 and counts are known
before the audit runs, and the index publishes exactly those."""

from __future__ import annotations

import json
import sys

from harness.core.counting import count_tools
from harness.pages import tool_shape
from tests.conftest import FIXTURE_SERVERS


def tool(name: str, words: int, schema_props: int = 0) -> dict:
    """A tool whose description is ``words`` words (o200k_base: one token each, with the quotes)."""
    props = {f"p{i}": {"type": "string"} for i in range(schema_props)}
    return {"name": name, "description": " ".join(["word"] * words),
            "inputSchema": {"type": "object", "properties": props}}


OLD = [tool("search", 30), tool("get", 10)]  # github as published 2026-08-19
NEW = OLD + [tool("create", 40)]  # github's current capture, since 2026-08-26
NEVER = [tool("private", 12)]  # never published
# The baseline's descriptions are 1…100 tokens: p90 = 90, median = 50.
WORDY = [tool("at_p90", 90), tool("below_p90", 89), tool("huge_schema", 3, schema_props=400)]
CALM = [tool("below_p90", 89), tool("small", 4)]


def counts(tools: list) -> dict:
    return count_tools(tools).to_json()


def serving_argv(tools: list) -> list[str]:
    return [sys.executable, str(FIXTURE_SERVERS / "tool_list.py"), "--tools-json", json.dumps(tools)]


def stdio(tools: list) -> dict:
    argv = serving_argv(tools)
    return {"command": argv[0], "args": argv[1:]}


def index() -> dict:
    """capture-index/v1 publishing ``OLD`` and ``NEW`` as github's captures, ``NEW`` current."""
    old, new = counts(OLD), counts(NEW)
    return {
        "method": "capture-index/v1",
        "captures": {
            old["canonicalSha256"]: [{"server": "github", "date": "2026-08-19", "totalTokens": old["totalTokens"],
                                      "toolCount": 2}],
            new["canonicalSha256"]: [{"server": "github", "date": "2026-08-26", "totalTokens": new["totalTokens"],
                                      "toolCount": 3}],
        },
        "current": {"github": {"canonicalSha256": new["canonicalSha256"], "date": "2026-08-26",
                               "totalTokens": new["totalTokens"], "toolCount": 3}},
    }


def shape() -> dict:
    """tool-shape/v1 over 100 tools whose descriptions are 1…100 tokens (p90 = 90, p50 = 50)."""
    return {"method": "tool-shape/v1", "quantile": "nearest-rank", "servers": 7, "tools": 100,
            "metrics": {"tokens": tool_shape.table(list(range(21, 121))),
                        "descriptionTokens": tool_shape.table(list(range(1, 101))),
                        "inputSchemaTokens": tool_shape.table(list(range(5, 105)))}}
