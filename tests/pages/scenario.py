"""The standard publish scenario: a catalog of eleven entries covering all nine statuses, their
records, a record and stale pages for a name no longer in the catalog, and a history.csv with an
isolation change, not-recorded rows and failures.

``build(root)`` writes it under ``root`` and returns the records it wrote, by name.
"""

from __future__ import annotations

from pathlib import Path

from tests.pages import builders as b

ALPHA_TOOLS = [b.tool("search_nodes", "Search the graph for nodes."), b.tool("open_nodes", "Open nodes by name.")]
BRAVO_TOOLS = [b.tool("x", "", {"type": "object"})]
BRAVO_INSTRUCTIONS = ("Call x to look things up in the archive; it accepts no arguments and returns the "
                      "newest entries first, with their authors, dates and tags. ") * 12
CHARLIE_TOOLS = [b.tool(f"op_{i}", f"Operation number {i} on the workspace.") for i in range(5)]
HOTEL_DISCOVER = [b.tool("discover_me", "Listed only under the server's own revision.")]

CATALOG = [
    b.entry("india", url="https://mcp.india.example/mcp", category="remote"),
    b.entry("alpha", category="official-reference", package="alpha-mcp", repo="https://github.com/example/alpha",
            notes="Pinned reference entry."),
    b.entry("bravo", category="community"),
    b.entry("charlie", category="community"),
    b.entry("delta", env=["DELTA_API_KEY"], category="vendor-official"),
    b.entry("echo"),
    b.entry("foxtrot", timeoutSeconds=30),
    b.entry("golf", notApplicable={"reason": "ships no Linux build", "evidence": "EBADPLATFORM"}),
    b.entry("hotel"),
    b.entry("juliet"),
    b.entry("kilo"),
]

HISTORY = [
    # alpha: docker, then host from 2026-10-26 with a timeout gap and one not-recorded row
    "2026-10-05,alpha,100,2,measured,docker",
    "2026-10-12,alpha,110,2,measured,docker",
    "2026-10-19,alpha,,,startup-failure,docker",
    "2026-10-26,alpha,{alpha},2,measured,host",
    "2026-11-02,alpha,,,timeout,host",
    "2026-11-09,alpha,{alpha},2,measured,",
    "2026-11-16,alpha,{alpha},2,measured,host",
    # bravo: rows from before the column existed, then host: all comparable
    "2026-08-03,bravo,20,1,measured,",
    "2026-08-10,bravo,21,1,measured,",
    "2026-11-16,bravo,{bravo},1,measured,host",
    # charlie: only not-recorded rows (five cells: written before the column existed)
    "2026-09-07,charlie,300,5,measured",
    "2026-09-28,charlie,{charlie},5,dynamic",
    # kilo: host, then a not-recorded row, then docker: the not-recorded row opens the series
    "2026-09-07,kilo,90,2,measured,host",
    "2026-09-14,kilo,95,2,measured,",
    "2026-09-21,kilo,{kilo},2,measured,docker",
    "2026-09-28,kilo,{kilo},2,measured,docker",
    # delta: failures only
    "2026-11-16,delta,,,auth-required,docker",
    # zulu is not in the catalog: ignored
    "2026-11-16,zulu,5,1,measured,host",
]


def records() -> dict[str, dict]:
    legacy_iso = {"mode": "host", "os": "linux", "image": None, "network": "host", "runtimes": {}, "note": None}
    out = {
        "alpha": b.measured("alpha", ALPHA_TOOLS),
        "kilo": b.measured("kilo", ALPHA_TOOLS, isolation=b.DOCKER),
        "bravo": b.measured("bravo", BRAVO_TOOLS, serverInstructions=BRAVO_INSTRUCTIONS),
        "charlie": b.measured("charlie", CHARLIE_TOOLS, status="dynamic", serverInstructions=b.ABSENT,
                              negotiatedProtocolVersion=b.ABSENT, isolation=legacy_iso,
                              notes=["tool set differed between two launches (5 vs 4 tools); the number is the first launch's capture"]),
        "delta": b.failed("delta", "auth-required", ["exited during initialize; it said: 'DELTA_API_KEY is required'"],
                          envVarNames=["DELTA_API_KEY"], stderrTail="Error: DELTA_API_KEY is required\n"),
        "echo": b.failed("echo", "startup-failure",
                         ["exited with code 1 during initialize", "failed the same way on retry 1 (retried: startup-failure)"],
                         stderrTail="node:internal/modules/cjs/loader:1228\n  throw err;\nError: Cannot find module 'left-pad'\n"),
        "foxtrot": b.failed("foxtrot", "timeout", ["no response to initialize within 60 s (phase: initialize)",
                                                   "failed the same way on retry 1 (retried: timeout)",
                                                   "widest budget tried: 60 s"], timeoutMs=30000),
        "golf": b.failed("golf", "not-applicable", ["ships no Linux build; the failure says: npm ERR! code EBADPLATFORM"]),
        "india": b.failed("india", "remote-auth-wall", ["HTTP 401 with WWW-Authenticate: Bearer realm=\"india\""],
                          launchCommand="https://mcp.india.example/mcp", headerNames=[]),
        "zulu": b.measured("zulu", ALPHA_TOOLS),
    }
    hotel = b.failed("hotel", "protocol-mismatch",
                     ["initialize refused: unsupported protocol version (data.supported: [\"2026-07-28\"])"],
                     negotiatedProtocolVersion=b.ABSENT)
    from harness.core.counting import count_tools
    counts = count_tools(HOTEL_DISCOVER).to_json()
    hotel["discover"] = {"protocolVersion": "2026-07-28", "supportedVersions": ["2026-07-28"],
                         "totalTokens": counts["totalTokens"], "toolCount": counts["toolCount"],
                         "canonicalSha256": counts["canonicalSha256"], "rawToolsCapture": HOTEL_DISCOVER}
    out["hotel"] = hotel
    return out


def build(root: Path) -> dict[str, dict]:
    root = Path(root)
    b.write_catalog(root, CATALOG, reference="alpha")
    recs = records()
    for name, record in recs.items():
        b.write_record(root, record, validate=name != "charlie")
    numbers = {n: recs[n]["totalTokens"] for n in ("alpha", "bravo", "charlie", "kilo")}
    b.write_history(root, [line.format(**numbers) for line in HISTORY])
    for stale in ("docs/servers/zulu.md", "docs/sparklines/zulu.svg", "docs/trends/zulu.svg"):
        (root / stale).parent.mkdir(parents=True, exist_ok=True)
        (root / stale).write_text("stale\n", encoding="utf-8")
    return recs
