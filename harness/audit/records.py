"""Other clients' records, from one data file (``harness/audit/data/client-records.json``).

Printed as records — what the vendor states, what it leaves open, the addresses and dates behind
it — never as measurements (methodology, §What counts as a record). Kinds: ``on-record-deferring``
(Cursor, Codex CLI, VS Code, and Claude Code, whose posture the resolver reads), ``paid-in-full``
(no default deferral on record: Claude Desktop, Windsurf, Gemini CLI, Zed, Kiro, Goose),
``not-searched`` and ``unknown-client``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "client-records.json"
KINDS = ("on-record-deferring", "paid-in-full", "not-searched", "unknown-client")


@functools.lru_cache(maxsize=None)
def all_records() -> dict:
    """``client id → record`` (a dict with name, record, statement, leavesOpen, conditions, sources)."""
    document = json.loads(DATA.read_text(encoding="utf-8"))
    return document["clients"]


def record_for(client: str | None) -> dict:
    """The record of ``client`` (``None`` → the unknown-client record), with its ``client`` id."""
    records = all_records()
    key = client if client in records else "unknown"
    return {"client": key, **records[key]}
