"""A throwaway repository root for the beside-the-headline tests: a catalog and published records
built with the publish tests' builders (``tests/pages/builders.py``)."""

from __future__ import annotations

from pathlib import Path

from tests.pages import builders as b

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 1}}}
TOOLS = {
    "alpha": [{"name": "search", "title": "Search", "description": "Finds things.", "inputSchema": SCHEMA,
               "annotations": {"readOnlyHint": True}, "outputSchema": {"type": "object"}},
              {"name": "fetch", "description": "Fetches one thing.", "inputSchema": {"type": "object"}}],
    "bravo": [{"name": "ping", "inputSchema": {"type": "object"}, "icons": [{"src": "data:image/png;base64,AA=="}]}],
    "charlie": [{"name": "refuse-me", "description": "The endpoint refuses this one.", "inputSchema": SCHEMA}],
    "empty": [],
}


def build(root: Path) -> dict[str, dict]:
    """Catalog alpha, bravo, charlie, empty (measured), delta (a failure); their records."""
    root.mkdir(parents=True, exist_ok=True)
    b.write_catalog(root, [b.entry(n) for n in ("alpha", "bravo", "charlie", "delta", "empty")])
    records = {name: b.measured(name, tools) for name, tools in TOOLS.items()}
    records["delta"] = b.failed("delta", "startup-failure", ["exited with code 1 during initialize"])
    for record in records.values():
        b.write_record(root, record)
    return records


def remeasure(root: Path, name: str, tools: list) -> dict:
    """Publish a new capture for ``name`` (a re-sweep): its canonicalSha256 changes."""
    record = b.measured(name, tools)
    b.write_record(root, record)
    return record
