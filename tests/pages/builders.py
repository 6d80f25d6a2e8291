"""Building a throwaway repository root for the publish tests: catalog, records, history.

Records are plain dicts validated with ``harness.util.schemas.check`` (the current schema) and
written with the record module's serializer; a *legacy* record (made before ``serverInstructions``
and ``isolation.arch`` existed) is deliberately not valid against today's schema and is written
without the check, as such files exist on disk.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.core.counting import count_tools
from harness.probe.build_record import serialize
from harness.util import atomic, schemas

ABSENT = object()
HOST = {"mode": "host", "os": "linux", "arch": "x86_64", "image": None, "network": "host",
        "runtimes": {"node": "v20.20.2", "python": "3.11.7"}, "note": None}
DOCKER = {**HOST, "mode": "docker", "image": "mcp-context-cost/sweep:1"}
STAMP = "2026-11-30T12:00:00.000Z"


def tool(name: object, description: object = "Does a thing.", schema: object = ABSENT) -> dict:
    out = {"name": name, "description": description}
    out["inputSchema"] = {"type": "object", "properties": {"q": {"type": "string"}}} if schema is ABSENT else schema
    return out


def base(name: str, status: str, **overrides) -> dict:
    record = {
        "methodologyVersion": "1.0", "provider": "tiktoken", "encoding": "o200k_base",
        "server": name, "status": status, "measuredAt": STAMP,
        "launchCommand": f"npx -y {name}-mcp@1.0.0", "envVarNames": [], "isolation": HOST,
        "timeoutMs": 60000, "deadlineMs": 270000, "harnessVersion": "0.1.0",
        "serverName": f"{name}-server", "serverVersion": "1.0.0", "serverInstructions": None,
        "declaredToolsCapability": True, "requestedProtocolVersion": "2025-11-25",
        "phase": "done", "negotiatedProtocolVersion": "2025-11-25",
        "totalTokens": None, "toolCount": None, "canonicalSha256": None, "canonicalLength": None,
        "tools": [], "attempts": [{"phase": "done", "outcome": "listed", "elapsedSeconds": 1.5,
                                   "exitCode": 0, "canonicalSha256": None}],
        "notes": [], "rawToolsCapture": None,
    }
    for key, value in overrides.items():
        if value is ABSENT:
            record.pop(key, None)
        else:
            record[key] = value
    return record


def measured(name: str, tools: list, status: str = "measured", **overrides) -> dict:
    counts = count_tools(tools).to_json()
    per_tool = []
    for t in counts["tools"]:
        row = {k: t[k] for k in ("name", "tokens", "descriptionTokens", "inputSchemaTokens")}
        if "divergence" in t:
            row["note"] = t["divergence"]
        per_tool.append(row)
    fields = {"totalTokens": counts["totalTokens"], "toolCount": counts["toolCount"],
              "canonicalSha256": counts["canonicalSha256"], "canonicalLength": counts["canonicalLength"],
              "tools": per_tool, "rawToolsCapture": tools}
    return base(name, status, **{**fields, **overrides})


def failed(name: str, status: str, notes: list[str], **overrides) -> dict:
    return base(name, status, phase="initialize", notes=notes,
                attempts=[{"phase": "initialize", "outcome": f"{status}: see notes", "elapsedSeconds": 2.0,
                           "exitCode": 1, "canonicalSha256": None}], **overrides)


def write_record(root: Path, record: dict, validate: bool = True) -> Path:
    path = root / "results" / record["server"] / "measurement.json"
    if validate:
        schemas.check("measurement", record, where=str(path))
    return atomic.write_text(path, serialize(record))


def write_catalog(root: Path, servers: list[dict], reference: str | None = None) -> Path:
    doc = {"servers": servers} | ({"reference": reference} if reference else {})
    path = root / "servers.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def write_history(root: Path, lines: list[str], header: str = "date,server,tokens,toolCount,status,isolation") -> Path:
    path = root / "history.csv"
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


def entry(name: str, **fields) -> dict:
    out = {"name": name}
    if "url" not in fields:
        out["command"] = f"npx -y {name}-mcp@1.0.0"
    return out | fields


def md_cells(line: str) -> list[str]:
    """Split a Markdown table row into cells, honouring backslash escapes (``\\|`` is not a
    separator; ``\\\\`` is an escaped backslash)."""
    assert line.startswith("|") and line.endswith("|"), line
    cells, current, i = [], "", 1
    while i < len(line) - 1:
        ch = line[i]
        if ch == "\\" and i + 1 < len(line) - 1:
            current += line[i:i + 2]
            i += 2
            continue
        if ch == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += ch
        i += 1
    cells.append(current.strip())
    return cells


def md_tables(text: str) -> list[list[list[str]]]:
    """Every table in ``text``: a list of rows, each a list of cells (header first, delimiter row
    dropped). A table is a run of consecutive lines starting with ``|``."""
    tables, current = [], []
    for line in text.split("\n"):
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    out = []
    for lines in tables:
        rows = [md_cells(line) for line in lines]
        assert len(rows) >= 2 and all(set(c) <= set("-: ") for c in rows[1]), lines[:2]
        out.append([rows[0], *rows[2:]])
    return out


def without_own_scripts(text: str) -> str:
    """A generated page without the scripts it carries itself: the dashboard's and the calculator's
    code, and their embedded JSON data — which must hold no raw ``<`` (so nothing in it can close
    the element or open another)."""
    from harness.pages import calculator, dashboard_assets

    for script in (dashboard_assets.SCRIPT, calculator.SCRIPT):
        text = text.replace(f"<script>{script}</script>", "", 1)
    for data_id in ("rows", "data"):
        opening = f'<script type="application/json" id="{data_id}">'
        if opening in text:
            start = text.index(opening)
            end = text.index("</script>", start)
            assert "<" not in text[start + len(opening):end]
            text = text[:start] + text[end + len("</script>"):]
    return text


def dashboard_rows(page: str) -> list[dict]:
    """The rows the dashboard draws, as embedded in ``docs/index.html``."""
    import json

    data = page.split('<script type="application/json" id="rows">', 1)[1].split("</script>", 1)[0]
    return json.loads(data)["rows"]
