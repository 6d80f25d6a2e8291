"""``results/capture-index.json`` (method capture-index/v1; methodology, "Capture index"): every
published capture's canonicalSha256 → the server and date it belongs to, plus each server's current
capture — derived from the tool vectors in the same regen pass that appends them.

It is what ``audit --changed`` and ``measure --changed`` join a local capture against, by hash and
never by name (:mod:`harness.audit.changed`). It sees only as far back as the vectors go (see the
bound in :mod:`harness.pages.tool_vectors`): an older version reads unidentified there.

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

from harness.pages.tool_vectors import VectorHistory

METHOD = "capture-index/v1"


def _collect(vectors: dict[str, VectorHistory]) -> tuple[dict[str, dict[str, dict]], dict[str, dict]]:
    """``(first, current)``: sha → {server: scalar fields of the first vector with it}, and server →
    its current entry. Captures are in the order first seen (servers by name, each oldest first):
    deterministic without sorting 100,000 hashes. Only the vectors' scalar fields are read; their
    per-tool lists never are."""
    first: dict[str, dict[str, dict]] = {}
    current: dict[str, dict] = {}
    for server in sorted(vectors):
        history = vectors[server].vectors
        if not history:
            continue
        for vector in history:
            fields = vector.fields
            seen = first.get(fields["canonicalSha256"])
            if seen is None:
                first[fields["canonicalSha256"]] = {server: fields}
            elif server not in seen:
                seen[server] = fields
        newest = history[-1].fields
        since = newest["date"]
        for vector in reversed(history):
            if vector.fields["canonicalSha256"] != newest["canonicalSha256"]:
                break
            since = vector.fields["date"]
        current[server] = {"canonicalSha256": newest["canonicalSha256"], "date": since,
                           "totalTokens": newest["totalTokens"], "toolCount": newest["toolCount"]}
    return first, current


def _servers(by_server: dict[str, dict]) -> list[str]:
    return sorted(by_server) if len(by_server) > 1 else list(by_server)


def build(vectors: dict[str, VectorHistory]) -> dict:
    """The index document for ``vectors`` (server name → its vectors)."""
    first, current = _collect(vectors)
    captures = {sha: [{"server": s, "date": by_server[s]["date"], "totalTokens": by_server[s]["totalTokens"],
                       "toolCount": by_server[s]["toolCount"]} for s in _servers(by_server)]
                for sha, by_server in first.items()}
    return {"method": METHOD, "captures": captures, "current": current}


def text(vectors: dict[str, VectorHistory]) -> str:
    """The file text of :func:`build`'s document, one capture (and one current entry) per line,
    formatted straight from the vectors: every value is a slug, a date, a hex digest or a whole
    number — nothing that needs escaping. It is not re-validated here (jsonschema costs ~0.3 ms per
    capture, seconds at 100,000); the tests check it against ``schemas/capture-index.schema.json``
    and that it parses to :func:`build`'s document, and readers (:mod:`harness.audit.published`)
    validate what they read."""
    first, current = _collect(vectors)
    captures = ",\n".join(
        f'"{sha}":[' + ",".join(f'{{"server":"{s}","date":"{by_server[s]["date"]}","totalTokens":'
                                f'{by_server[s]["totalTokens"]},"toolCount":{by_server[s]["toolCount"]}}}'
                                for s in _servers(by_server)) + "]"
        for sha, by_server in first.items())
    now = ",\n".join(f'"{name}":{{"canonicalSha256":"{c["canonicalSha256"]}","date":"{c["date"]}",'
                      f'"totalTokens":{c["totalTokens"]},"toolCount":{c["toolCount"]}}}' for name, c in current.items())
    return f'{{"method":"{METHOD}",\n"captures":{{\n{captures}\n}},\n"current":{{\n{now}\n}}}}\n'
