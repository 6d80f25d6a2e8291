"""Building a real git repository through a sequence of real sweeps: fixture
servers (``tests/fixtures/servers/tool_list.py``) whose tools are fixed byte for byte by the test,
so every count is known before the sweep measures it.

``Plan`` holds, per server, the tools array it serves on each sweep date (``None`` = it fails to
start that week); :func:`run` commits the catalog for each date and runs
``mcp-context-cost sweep --date D --commit`` in-process, so the sweep's own regen appends the tool
vectors and its own commit publishes them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.counting import count_tools
from tests.db.sweeprepo import catalog_text, commit_catalog, fixture, init_repo, sweep

FAIL = None


def tool(name: str, words: int = 3, props: int = 1) -> dict:
    """A tool whose description is ``words`` words (one token each) and whose schema has ``props``
    string properties."""
    return {"name": name, "description": " ".join(["alpha"] * words),
            "inputSchema": {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(props)}}}


def exact(total: int, name: str = "edge") -> list[dict]:
    """A one-tool array whose capture counts exactly ``total`` tokens (found by search)."""
    for words in range(0, total):
        tools = [tool(name, words)]
        if count_tools(tools).totalTokens == total:
            return tools
    raise AssertionError(f"no padding gives exactly {total} tokens")


def total(tools: list[dict]) -> int:
    return count_tools(tools).totalTokens


def per_tool(tools: list[dict]) -> dict[str, tuple[int, int, int]]:
    return {t.name: (t.tokens, t.descriptionTokens, t.inputSchemaTokens) for t in count_tools(tools).tools}


def command(tools: list[dict] | None) -> str:
    if tools is None:
        return fixture("tool_list", "--fail")
    return fixture("tool_list", "--tools-json", json.dumps(tools))


@dataclass
class Plan:
    """``servers[name][date]`` = tools served on that sweep date (``FAIL``: fails to start); a
    date a server is absent from is a week it is not swept. ``isolation[date]`` = mode per server
    (default host)."""

    dates: list[str]
    servers: dict[str, dict[str, list | None]]
    isolation: dict[tuple[str, str], str] = field(default_factory=dict)

    def catalog(self, date: str) -> str:
        entries = []
        for name in sorted(self.servers):
            served = [d for d in self.dates if d <= date and d in self.servers[name]]
            tools = self.servers[name][served[-1]] if served else []
            entries.append((name, command(tools)))
        return catalog_text(entries)


def run(root: Path, plan: Plan, upto: str | None = None) -> Path:
    """Create the repository and run every sweep of ``plan`` (through ``upto``), asserting each
    published. One sweep per (date, isolation) group of the servers swept that day."""
    init_repo(root, plan.catalog(plan.dates[0]))
    for date in plan.dates:
        if upto and date > upto:
            break
        if (root / "servers.yaml").read_text(encoding="utf-8") != plan.catalog(date):
            commit_catalog(root, plan.catalog(date), f"catalog for {date}")
        groups: dict[str, list[str]] = {}
        for name in sorted(plan.servers):
            if date in plan.servers[name]:
                groups.setdefault(plan.isolation.get((name, date), "host"), []).append(name)
        for mode, names in sorted(groups.items()):
            code, _, err = sweep(root, "--date", date, "--only", ",".join(names), "--isolation", mode,
                                 "--commit", "--concurrency", "4")
            assert code == 0, err
    return root
