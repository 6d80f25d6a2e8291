"""The audit's rules as data for the setup calculator page: ``calculator_rules()``.

The page layer sits below the audit, so it renders from a committed copy of this data,
``harness/pages/data/calculator-rules.json``; ``python -m harness.audit.calculator_rules`` rewrites
that copy, and a test keeps it equal to this function (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import json
from typing import Any

from harness.audit import deferral, readers
from harness.audit.claude_settings import SHELL, Place
from harness.audit.clients import BY_ID
from harness.audit.model import READ
from harness.audit.client_statements import statement_for as record_for
from harness.pages.calculator import CLAUDE_CHOICES, CLIENTS, RULES_FILE, SERVERS_KEY


def calculator_rules() -> dict[str, Any]:
    """Per client its config shape and record, Claude Code's posture per variable choice, the read bounds."""
    clients = {}
    for client in CLIENTS:
        shape, record = BY_ID[client].SHAPE, record_for(client)
        clients[client] = {
            "name": BY_ID[client].NAME, "record": record["record"], "statement": record["statement"],
            "leavesOpen": record.get("leavesOpen", ""), "serversKey": SERVERS_KEY[client],
            "typeKey": shape.type_key, "typeMap": dict(shape.type_map), "urlKeys": [k for k, _ in shape.url_keys],
            "command": shape.command, "args": shape.args, "alwaysLoad": shape.always_load,
            "disabledKey": shape.disabled_key, "enabledKey": shape.enabled_key}
    postures = []
    for label, env in CLAUDE_CHOICES:
        posture = deferral.resolve([Place("shell", SHELL, READ, env=env)] if env else [])
        postures.append({"label": label, "kind": posture.kind, "reason": posture.reason})
    return {"clients": clients, "claudePostures": postures, "deferred": deferral.DEFERRED,
            "upFront": deferral.UP_FRONT, "maxConfigBytes": readers.MAX_CONFIG_BYTES,
            "maxJsoncBytes": readers.MAX_JSON5_BYTES}


def file_text() -> str:
    """The text ``RULES_FILE`` holds."""
    return json.dumps(calculator_rules(), ensure_ascii=False, indent=2) + "\n"


if __name__ == "__main__":
    RULES_FILE.write_text(file_text(), encoding="utf-8")
