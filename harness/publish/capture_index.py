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

from harness.publish.tool_vectors import VectorHistory

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
            fields = vector.fields  # the scalars only: the per-tool lists are never parsed here
            by_server = captures.setdefault(fields["canonicalSha256"], {})
            if server not in by_server:
                by_server[server] = _entry(server, fields)
        newest = history[-1].fields
        since = newest["date"]
        for vector in reversed(history):
            if vector.fields["canonicalSha256"] != newest["canonicalSha256"]:
                break
            since = vector.fields["date"]
        current[server] = {"canonicalSha256": newest["canonicalSha256"], "date": since,
                           "totalTokens": newest["totalTokens"], "toolCount": newest["toolCount"]}
    return {"method": METHOD,
            "captures": {sha: [by_server[s] for s in (sorted(by_server) if len(by_server) > 1 else by_server)]
                         for sha, by_server in sorted(captures.items())},
            "current": current}


def _entry(server: str, vector: dict) -> dict:
    return {"server": server, "date": vector["date"], "totalTokens": vector["totalTokens"],
            "toolCount": vector["toolCount"]}


def render(document: dict) -> str:
    """File text: one capture (and one current entry) per line. Every value is a slug, a date, a
    hex digest or a whole number — nothing that needs escaping — so lines are formatted directly.
    The document is built only from vectors that passed the tool-vectors rules, so it is not
    re-validated here (jsonschema costs ~0.3 ms per capture, seconds at 100,000); the tests check it
    against ``schemas/capture-index.schema.json``, and readers (:mod:`harness.audit.published`)
    validate what they read."""
    captures = ",\n".join(f'"{sha}":[' + ",".join(_row(row) for row in rows) + "]"
                           for sha, rows in document["captures"].items())
    current = ",\n".join(f'"{name}":{{"canonicalSha256":"{c["canonicalSha256"]}","date":"{c["date"]}",'
                          f'"totalTokens":{c["totalTokens"]},"toolCount":{c["toolCount"]}}}'
                          for name, c in document["current"].items())
    return f'{{"method":"{METHOD}",\n"captures":{{\n{captures}\n}},\n"current":{{\n{current}\n}}}}\n'


def _row(row: dict) -> str:
    return (f'{{"server":"{row["server"]}","date":"{row["date"]}","totalTokens":{row["totalTokens"]},'
            f'"toolCount":{row["toolCount"]}}}')
