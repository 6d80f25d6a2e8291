"""results/capture-index.json (harness/pages/tool_vectors.py; capture-index/v1): every capture the
vectors hold, by hash, with its first date per server; each server's current capture and since
when; the published text parses to exactly the document and matches its schema."""

from __future__ import annotations

import json

from harness.pages import tool_vectors
from harness.pages import tool_vectors as tv
from harness.util import schemas
from tests.pages import builders as b

A = [b.tool("alpha", "Search.")]
B = [*A, b.tool("beta", "Fetch.")]
C = [b.tool("gamma", "Other.")]


def fold(server: str, *steps) -> tv.VectorHistory:
    history = tv.VectorHistory(server)
    for tools, day, mode in steps:
        record = b.measured(server, tools, measuredAt=f"{day}T12:00:00.000Z", isolation={**b.HOST, "mode": mode})
        history = tv.advance(history, record, f"results/{server}/measurement.json")
    return history


def test_index_of_vectors():
    vectors = {
        "one": fold("one", (A, "2026-01-05", "host"), (B, "2026-01-12", "host"), (A, "2026-01-19", "host"),
                    (A, "2026-01-26", "docker")),
        "two": fold("two", (B, "2026-01-19", "host")),
        "three": fold("three", (C, "2026-02-02", "host")),
        "none": tv.VectorHistory("none"),
    }
    doc = tool_vectors.build_capture_index(vectors)
    schemas.check("capture-index", doc)
    assert json.loads(tool_vectors.capture_index_text(vectors)) == doc
    sha = {name: b.measured("x", tools)["canonicalSha256"] for name, tools in (("A", A), ("B", B), ("C", C))}
    assert doc["captures"][sha["A"]] == [{"server": "one", "date": "2026-01-05", "totalTokens": vectors["one"].vectors[0]["totalTokens"],
                                          "toolCount": 1}]  # the first date, though A came back later
    assert [r["server"] for r in doc["captures"][sha["B"]]] == ["one", "two"]
    assert [r["date"] for r in doc["captures"][sha["B"]]] == ["2026-01-12", "2026-01-19"]
    # current since the start of the trailing run of the same bytes (an isolation change is no new capture)
    assert doc["current"]["one"] == {"canonicalSha256": sha["A"], "date": "2026-01-19",
                                     "totalTokens": vectors["one"].vectors[0]["totalTokens"], "toolCount": 1}
    assert set(doc["current"]) == {"one", "two", "three"}
    empty = tool_vectors.capture_index_text({})
    assert json.loads(empty) == {"method": "capture-index/v1", "captures": {}, "current": {}}


def test_index_text_is_the_document_one_capture_a_line():
    """The text, byte for byte: each capture (one server or several, sorted) and each current entry on a
    line of its own, as compact JSON."""
    vectors = {
        "zed": fold("zed", (A, "2026-01-05", "host"), (B, "2026-01-12", "docker"), (C, "2026-01-19", "host")),
        "one": fold("one", (B, "2026-01-19", "host"), (A, "2026-01-26", "host")),
        "mid": fold("mid", (A, "2026-01-05", "host")),
        "none": tv.VectorHistory("none"),
    }
    doc = tool_vectors.build_capture_index(vectors)

    def compact(value) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    lines = [f"{compact(sha)}:{compact(entries)}" for sha, entries in doc["captures"].items()]
    now = [f"{compact(name)}:{compact(entry)}" for name, entry in doc["current"].items()]
    assert [len(entries) for entries in doc["captures"].values()] == [3, 2, 1]
    assert tool_vectors.capture_index_text(vectors) == (
        '{"method":"capture-index/v1",\n"captures":{\n' + ",\n".join(lines) + '\n},\n"current":{\n' + ",\n".join(now)
        + "\n}}\n")
