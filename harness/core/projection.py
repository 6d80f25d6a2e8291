"""The Anthropic projection of a tools capture and its o200k count (spec "Claude divergence",
method tools-delta/v1; "CLI cross-check", cli-cross-check/v1, which starts from the same
projection as ``mappedTokens``).

An Anthropic tool definition carries three fields — ``name``, ``description``, ``input_schema`` —
so the projection of a captured ``tools`` array keeps, per element and in server order, exactly
``{"name": tool.name, "description": tool.description, "input_schema": tool.inputSchema}``, each
key present only when the tool has that field (JavaScript ``undefined`` is left out, as
``JSON.stringify`` would). Everything else a server ships (``title``, ``annotations``,
``outputSchema``, ``execution``, ``icons``, ``_meta`` …) has nowhere to go in a request: that is
effect 1 of the spec, "field selection". A non-object element projects to ``{}``.

``mappedTokens`` = o200k_base tokens of ``JSON.stringify(projection)``; the field-selection share is
``1 - mappedTokens / totalTokens`` (0 for an empty capture). Nothing here changes the headline.
"""

from __future__ import annotations

import json

from harness.core.canonical import stringify
from harness.core.tokenizer import count

FIELDS = (("name", "name"), ("description", "description"), ("inputSchema", "input_schema"))


def project(tools: list) -> list[dict]:
    """The projection of a parsed tools array (see module docstring). Raises ``TypeError`` when
    ``tools`` is not a list."""
    if not isinstance(tools, list):
        raise TypeError(f"tools must be a list, got {type(tools).__name__}")
    out = []
    for tool in tools:
        tool = tool if isinstance(tool, dict) else {}
        out.append({target: tool[source] for source, target in FIELDS if source in tool})
    return out


def projection_text(tools: list) -> str:
    """``JSON.stringify(project(tools))``: the bytes ``mappedTokens`` counts."""
    return stringify(project(tools))


def mapped_tokens(tools: list) -> int:
    """o200k_base tokens of the projection's canonical text (``mappedTokens``)."""
    return count(projection_text(tools))


def request_tools(tools: list) -> list:
    """The projection as an ordinary JSON reader sees its canonical text (``json.loads``), which
    is what a request body carries: integers stay integers (``jsparse`` would give ``1.0``, which
    a Python JSON encoder writes back as ``1.0``, not ``1``)."""
    return json.loads(projection_text(tools))


def selection_share(total_tokens: int, mapped: int) -> float:
    """The share of the headline the projection drops (0.0–1.0; 0.0 when ``total_tokens`` is 0)."""
    return 0.0 if total_tokens <= 0 else max(0.0, 1.0 - mapped / total_tokens)
