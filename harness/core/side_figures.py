"""Resources and prompts as labelled side figures (method side-lists/v1; issue #14).

What a server lists through ``resources/list``, ``resources/templates/list`` and ``prompts/list``
is context a client may load too, but it is not the headline and is never added to it. Each list
is counted like the tools array: the items of every page concatenated in server order, canonical
form ``JSON.stringify(items)`` over the parsed value, o200k_base tokens of that text, SHA-256 of its
UTF-8 bytes. A record keeps each list's items (``rawCapture``) so every figure re-derives from the
record alone (:func:`rederive`, used by ``verify``).

Record field ``sideLists`` (``schemas/measurement.schema.json``)::

    {"method": "side-lists/v1",
     "resources": {"count": 3, "pages": 1, "totalTokens": 120, "canonicalSha256": "…", "rawCapture": [...]},
     "prompts": {"error": "JSON-RPC error -32603: …"}}

A list appears only when the server declared the capability it belongs to at initialize
(``resources`` for the first two, ``prompts`` for the third); an ``error`` entry says why that
list has no figure.
"""

from __future__ import annotations

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
    """``{count, totalTokens, canonicalSha256}`` of one list's concatenated items. Raises
    ``TypeError`` when ``items`` is not a list."""
    if not isinstance(items, list):
        raise TypeError(f"items must be a list, got {type(items).__name__}")
    canonical = stringify(items)
    return {"count": len(items), "totalTokens": count(canonical),
            "canonicalSha256": hashlib.sha256(canonical.encode("utf-8")).hexdigest()}


def rederive(side: object) -> tuple[dict, dict]:
    """``(published, derived)`` for every figure of a record's ``sideLists``, keyed
    ``sideLists.<list>.<field>``, re-derived from the list's ``rawCapture`` (a figure without one
    is derived as ``"no rawCapture"``, a mismatch); both empty when there is none."""
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
    """``(tokens of every counted list added, floor)`` for a record's ``sideLists``; ``floor`` when
    a declared list has no figure for a reason other than the method being absent (-32601).
    ``None`` when the record has no side figures or declared none of the capabilities."""
    if not isinstance(side, dict):
        return None
    entries = [side[key] for key, *_ in LISTS if isinstance(side.get(key), dict)]
    if not entries:
        return None
    tokens = sum(_as_int(e.get("totalTokens")) or 0 for e in entries if "totalTokens" in e)
    floor = any("totalTokens" not in e and not str(e.get("error", "")).startswith(METHOD_NOT_FOUND) for e in entries)
    return tokens, floor


def _as_int(value: object) -> object:
    # Records are parsed with JSON.parse semantics, so integers arrive as floats.
    return int(value) if isinstance(value, float) and value.is_integer() else value
