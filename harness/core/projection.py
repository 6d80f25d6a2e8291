"""The Anthropic projection of a tools capture (``name``, ``description``, ``input_schema`` per tool)
and its o200k count ``mappedTokens`` (docs/METHODOLOGY.md, 'Claude divergence', 'CLI cross-check').
"""

from __future__ import annotations

import json

from harness.core.canonical import stringify
from harness.core.tokenizer import count

FIELDS = (("name", "name"), ("description", "description"), ("inputSchema", "input_schema"))


def project(tools: list) -> list[dict]:
    """Per tool, the three Anthropic fields it has; a non-object tool projects to ``{}``."""
    if not isinstance(tools, list):
        raise TypeError(f"tools must be a list, got {type(tools).__name__}")
    out = []
    for tool in tools:
        tool = tool if isinstance(tool, dict) else {}
        out.append({target: tool[source] for source, target in FIELDS if source in tool})
    return out


def projection_text(tools: list) -> str:
    """``JSON.stringify(project(tools))``: the text ``mappedTokens`` counts."""
    return stringify(project(tools))


def mapped_tokens(tools: list) -> int:
    """o200k_base tokens of the projection's canonical text."""
    return count(projection_text(tools))


def request_tools(tools: list) -> list:
    """The projection as a request body carries it (``json.loads``: integers stay int)."""
    return json.loads(projection_text(tools))


def selection_share(total_tokens: int, mapped: int) -> float:
    """The share of the headline the projection drops (0.0 when ``total_tokens`` is 0)."""
    return 0.0 if total_tokens <= 0 else max(0.0, 1.0 - mapped / total_tokens)
