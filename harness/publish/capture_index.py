"""``results/capture-index.json`` (method capture-index/v1; methodology, "Capture index"): every
published capture's canonicalSha256 → the server and date it belongs to, plus each server's current
capture — derived from the tool vectors in the same regen pass that appends them.

It is what ``audit --changed`` and ``measure --changed`` join a local capture against, by hash and
never by name (:mod:`harness.audit.changed`). It sees only as far back as the vectors go (see the
bound in :mod:`harness.publish.tool_vectors`): an older version reads unidentified there.

Document (``schemas/capture-index.schema.json``)::

    {"method": "capture-index/v1",
     "captures": {"<sha>": [{"server": "github", "date": "2026-08-19",      first published
                             "totalTokens": 1234, "toolCount": 40}, …]},    one per server, by name
     "current": {"github": {"canonicalSha256": "<sha>", "date": "2026-08-26",  current since
                            "totalTokens": 1300, "toolCount": 41}}}

A server's current capture is its newest vector — the capture of its newest measured or dynamic
record (a later failure publishes no capture, so it does not replace it); ``date`` is the first day
of the trailing run of vectors with that hash (an isolation change alone is no new capture).
"""

from __future__ import annotations

import json

from harness.publish.tool_vectors import VectorHistory
from harness.util import schemas

METHOD = "capture-index/v1"


def build(vectors: dict[str, VectorHistory]) -> dict:
    """The index document for ``vectors`` (server name → its vectors)."""
    captures: dict[str, dict[str, dict]] = {}
    current: dict[str, dict] = {}
    for server in sorted(vectors):
        history = vectors[server].vectors
        if not history:
            continue
        for vector in history:
            captures.setdefault(vector["canonicalSha256"], {}).setdefault(server, _entry(server, vector))
        newest = history[-1]
        since = newest["date"]
        for vector in reversed(history):
            if vector["canonicalSha256"] != newest["canonicalSha256"]:
                break
            since = vector["date"]
        current[server] = {"canonicalSha256": newest["canonicalSha256"], "date": since,
                           "totalTokens": newest["totalTokens"], "toolCount": newest["toolCount"]}
    return {"method": METHOD,
            "captures": {sha: [by_server[s] for s in sorted(by_server)] for sha, by_server in sorted(captures.items())},
            "current": current}


def _entry(server: str, vector: dict) -> dict:
    return {"server": server, "date": vector["date"], "totalTokens": vector["totalTokens"],
            "toolCount": vector["toolCount"]}


def render(document: dict) -> str:
    """File text: one capture (and one current entry) per line. Validated against
    ``schemas/capture-index.schema.json``; raises ``SchemaViolation``."""
    schemas.check("capture-index", document, where="results/capture-index.json")
    compact = {"separators": (",", ":"), "sort_keys": False}
    captures = ",\n".join(f"{json.dumps(sha)}:{json.dumps(rows, **compact)}"
                          for sha, rows in document["captures"].items())
    current = ",\n".join(f"{json.dumps(name)}:{json.dumps(entry, **compact)}"
                         for name, entry in document["current"].items())
    return (f'{{"method":{json.dumps(document["method"])},\n"captures":{{\n{captures}\n}},\n'
            f'"current":{{\n{current}\n}}}}\n')
