"""What each client's vendor has put on record about deferring tool definitions.

Read from ``data/client-records.json``; printed as statements, never as measurements
(docs/METHODOLOGY.md, "What counts as a record"). Public: ``KINDS``, ``all_statements``, ``statement_for``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "client-records.json"
KINDS = ("on-record-deferring", "paid-in-full", "not-searched", "unknown-client")


@functools.lru_cache(maxsize=None)
def all_statements() -> dict[str, dict[str, Any]]:
    """``client id → statement`` (name, record, statement, leavesOpen, conditions, sources)."""
    document = json.loads(DATA.read_text(encoding="utf-8"))
    clients: dict[str, dict[str, Any]] = document["clients"]
    return clients


def statement_for(client: str | None) -> dict[str, Any]:
    """The statement on ``client`` with its ``client`` id; an unknown or ``None`` client gets the unknown one."""
    statements = all_statements()
    key = client if client in statements else "unknown"
    return {"client": key, **statements[key]}
