"""The ``auto``/``auto:N`` threshold comparison as a range through the divergence band.

Rule: docs/METHODOLOGY.md, "The threshold comparison is a range, not a point".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

SPEC_BAND = (0.19, 1.93)
SPEC_SOURCE = "the spec's published band, 0.19×–1.93× across 86 servers (methodology, Claude divergence)"
ABOVE, BELOW, STRADDLES = "above", "below", "straddles"


@dataclass(frozen=True)
class Band:
    """``low``/``high`` ratios (Claude tokens per o200k token), where they came from, and the exact
    published Claude counts by ``canonicalSha256``."""

    low: float = SPEC_BAND[0]
    high: float = SPEC_BAND[1]
    source: str = SPEC_SOURCE
    exact: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """``verdict`` (above/below/straddles), the converted range in Claude tokens (``high`` is
    ``None`` when unbounded), the ``threshold`` in tokens and how many servers used an exact count."""

    verdict: str
    low: float
    high: float | None
    threshold: float
    exact_rows: int

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "lowTokens": round(self.low), "highTokens": None if self.high is None
                else round(self.high), "thresholdTokens": round(self.threshold), "exactRows": self.exact_rows}


def compare(parts: list[tuple[int | None, str | None]], percent: int, context: int, band: Band) -> Verdict:
    """Compare a stack against ``percent``% of a ``context``-token window. ``parts``: each
    deferrable server's ``(o200k tokens or None, canonicalSha256 or None)``."""
    low = high = 0.0
    exact = 0
    for tokens, sha in parts:
        if tokens is None:
            high = math.inf
            continue
        if sha and sha in band.exact:
            low += band.exact[sha]
            high += band.exact[sha]
            exact += 1
        else:
            low += tokens * band.low
            high += tokens * band.high
    threshold = context * percent / 100.0
    verdict = ABOVE if low >= threshold else BELOW if high < threshold else STRADDLES
    return Verdict(verdict, low, None if math.isinf(high) else high, threshold, exact)


def load_band(path: Path) -> Band:
    """The band from ``path`` (``results/divergence.json``) when it holds a derived range, else the
    spec's. Never raises: a file that is missing or of another shape means the spec's band."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return Band()
    if not isinstance(document, dict):
        return Band()
    pair = _range(document)
    if pair is None:
        return Band()
    return Band(pair[0], pair[1], f"the derived range in {path.name} ({pair[0]:g}×–{pair[1]:g}×)", _rows(document))


def _range(document: dict) -> tuple[float, float] | None:
    for key in ("range", "ratioRange", "band"):
        value = document.get(key)
        if isinstance(value, dict):
            value = [value.get("low", value.get("min")), value.get("high", value.get("max"))]
        if isinstance(value, list) and len(value) == 2 and all(_positive(v) for v in value) and value[0] <= value[1]:
            return float(value[0]), float(value[1])
    return None


def _rows(document: dict) -> dict:
    rows = document.get("rows", document.get("servers"))
    if isinstance(rows, dict):
        rows = list(rows.values())
    exact = {}
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or row.get("stale"):
            continue
        sha = row.get("canonicalSha256")
        claude = row.get("claudeTokens", row.get("claude"))
        if isinstance(sha, str) and isinstance(claude, (int, float)) and not isinstance(claude, bool) and claude >= 0:
            exact[sha] = float(claude)
    return exact


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1000
