"""``results/tool-shape.json`` (tool-shape/v1): :func:`build`, :func:`percentile_of`, :func:`nearest_rank`.

Rules: docs/METHODOLOGY.md, "Tool shape".
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping
from typing import Any

from harness.core.record import NUMBERED
from harness.pages.text import as_int
from harness.util import published, schemas

METHOD = "tool-shape/v1"
POINTS = 101
METRICS = ("tokens", "descriptionTokens", "inputSchemaTokens")
ADVICE_PERCENTILE = 90  # a description at or above it draws advice (audit --suggest, server pages)


def nearest_rank(ordered: list[int], p: int) -> int:
    """The ``p``-th nearest-rank point (0 ≤ p ≤ 100) of the non-empty ascending list ``ordered``."""
    rank = max(1, -(-p * len(ordered) // 100))  # ceil without floats
    return ordered[rank - 1]


def table(values: list[int]) -> list[int] | None:
    """The 101-point nearest-rank table of ``values`` (any order); ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return [nearest_rank(ordered, p) for p in range(POINTS)]


def percentile_of(points: list[int], value: int) -> int | None:
    """The largest ``p`` with ``points[p] ≤ value`` — ``value`` is at or above the p-th percentile;
    ``None`` when it is below the smallest measured value (p0)."""
    p = bisect.bisect_right(points, value) - 1
    return p if p >= 0 else None


def complete_tools(records: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """Every complete per-tool diagnostic of the ``measured``/``dynamic`` records, as
    ``{tokens, descriptionTokens, inputSchemaTokens}`` ints, in server-name then server order."""
    out = []
    for name in sorted(records):
        record = records[name]
        if record.get("status") not in NUMBERED:
            continue
        for tool in record.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            values = {m: as_int(tool.get(m)) for m in METRICS}
            if all(v is not None and v >= 0 and v == tool.get(m) for m, v in values.items()):
                out.append(values)
    return out


def build(records: Mapping[str, Mapping[str, Any]]) -> dict:
    """The tool-shape document for the catalog's ``records`` (name → parsed record)."""
    tools = complete_tools(records)
    servers = sum(1 for r in records.values() if r.get("status") in NUMBERED)
    return {"method": METHOD, "quantile": "nearest-rank", "servers": servers, "tools": len(tools),
            "metrics": {m: table([t[m] for t in tools]) for m in METRICS}}


def render(document: dict) -> str:
    """File text of ``document``: validated against ``schemas/tool-shape.schema.json``, one metric
    table per line. Raises ``SchemaViolation``."""
    schemas.check("tool-shape", document, where=published.TOOL_SHAPE)
    head = {k: v for k, v in document.items() if k != "metrics"}
    lines = [json.dumps(head, separators=(",", ":"))[:-1] + ',"metrics":{']
    metrics = [f"{json.dumps(m)}:{json.dumps(document['metrics'][m], separators=(',', ':'))}" for m in METRICS]
    lines.append(",\n".join(metrics))
    return "\n".join(lines) + "\n}}\n"
