"""Resources and prompts as side figures, never added to the headline: ``figure``, ``rederive``,
``total`` (docs/METHODOLOGY.md, 'Resources and prompts (side figures)').
"""

from __future__ import annotations

from typing import Any

import hashlib

from harness.core.canonical import stringify
from harness.core.tokenizer import count

METHOD = "side-lists/v1"
# (record key, request method, result array field, capability that declares it)
LISTS = (("resources", "resources/list", "resources", "resources"),
         ("resourceTemplates", "resources/templates/list", "resourceTemplates", "resources"),
         ("prompts", "prompts/list", "prompts", "prompts"))
CHECKED = ("count", "totalTokens", "canonicalSha256")
METHOD_NOT_FOUND = "JSON-RPC error -32601"


def figure(items: list) -> dict:
    """``{count, totalTokens, canonicalSha256}`` of one list's items; TypeError for a non-list."""
    if not isinstance(items, list):
        raise TypeError(f"items must be a list, got {type(items).__name__}")
    canonical = stringify(items)
    return {"count": len(items), "totalTokens": count(canonical),
            "canonicalSha256": hashlib.sha256(canonical.encode("utf-8")).hexdigest()}


def rederive(side: object) -> tuple[dict, dict]:
    """``(published, derived)`` for every ``sideLists.<list>.<field>``, from each ``rawCapture``."""
    published: dict = {}
    derived: dict = {}
    if not isinstance(side, dict):
        return published, derived
    for key, *_ in LISTS:
        entry = side.get(key)
        if not isinstance(entry, dict):
            continue
        if not isinstance(entry.get("rawCapture"), list):
            # A figure with nothing to re-derive it from is not published: it never matches.
            for field in (f for f in CHECKED if f in entry):
                published[f"sideLists.{key}.{field}"] = _as_int(entry[field])
                derived[f"sideLists.{key}.{field}"] = "no rawCapture"
            continue
        again = figure(entry["rawCapture"])
        for field in CHECKED:
            name = f"sideLists.{key}.{field}"
            published[name] = _as_int(entry.get(field))
            derived[name] = again[field]
    return published, derived


def total(side: object) -> tuple[int, bool] | None:
    """``(tokens of every counted list, floor)``, or ``None`` without side figures; ``floor`` when a
    declared list failed for a reason other than -32601.
    """
    if not isinstance(side, dict):
        return None
    entries = [side[key] for key, *_ in LISTS if isinstance(side.get(key), dict)]
    if not entries:
        return None
    tokens = sum(_as_int(e.get("totalTokens")) or 0 for e in entries if "totalTokens" in e)
    floor = any("totalTokens" not in e and not str(e.get("error", "")).startswith(METHOD_NOT_FOUND) for e in entries)
    return tokens, floor


def _as_int(value: object) -> Any:
    # Records are parsed with JSON.parse semantics, so integers arrive as floats.
    return int(value) if isinstance(value, float) and value.is_integer() else value
