"""Cost movement (cost-regression/v1): :func:`movement` per server, ``results/regressions.json``
(:func:`to_json`) and ``results/regressions.md`` (:func:`render_md`).

Rules: docs/METHODOLOGY.md, "Cost movement".
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any
from dataclasses import dataclass

from harness.db.history import HistoryRow
from harness.pages import site
from harness.pages.text import md, num
from harness.pages.series import Series
from harness.pages.tool_vectors import METHOD, VectorHistory, at  # one method: the vectors and the movement
from harness.util import published

PERCENT, TOKENS = 5, 25
MOVED, UNCHANGED, NONE = "moved", "unchanged", "no-comparable-measurement"
UNAVAILABLE = "breakdown unavailable"


@dataclass(frozen=True)
class ToolMove:
    """One tool whose numbers changed; ``before``/``after`` are ``(tokens, descriptionTokens,
    inputSchemaTokens)`` or ``None`` where the tool is absent."""

    name: str
    before: tuple[int, int, int] | None
    after: tuple[int, int, int] | None

    @property
    def change(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "heavier" if self.delta > 0 else "lighter" if self.delta < 0 else "recomposed"

    def part(self, index: int) -> int:
        """Signed change of tokens (0), description tokens (1) or input-schema tokens (2)."""
        return (self.after[index] if self.after else 0) - (self.before[index] if self.before else 0)

    @property
    def delta(self) -> int:
        return self.part(0)


@dataclass(frozen=True)
class Breakdown:
    tools: tuple[ToolMove, ...]
    unattributed: int  # total movement minus the sum of the per-tool deltas

    @property
    def attributed(self) -> int:
        return sum(t.delta for t in self.tools)


@dataclass(frozen=True)
class Movement:
    server: str
    state: str
    series: Series
    before: HistoryRow | None = None
    after: HistoryRow | None = None
    held_since: str | None = None
    held_sweeps: int = 0
    breakdown: Breakdown | None = None
    unavailable: str | None = None  # why there is no breakdown (a moved server only)

    @property
    def latest(self) -> HistoryRow | None:
        return self.series.points[-1] if self.series.points else None

    @property
    def window(self) -> tuple[HistoryRow, HistoryRow]:
        """``(before, after)`` of a moved series."""
        assert self.before is not None and self.after is not None, "only a moved series has a window"
        return self.before, self.after

    @property
    def held_days(self) -> int | None:
        if self.held_since is None or self.latest is None:
            return None
        return (dt.date.fromisoformat(self.latest.date) - dt.date.fromisoformat(self.held_since)).days

    @property
    def delta(self) -> int | None:
        if self.state != MOVED:
            return None
        before, after = counts(self.window[0]), counts(self.window[1])
        return after[0] - before[0]

    @property
    def percent(self) -> float | None:
        """Signed percentage of the earlier cost (``None`` unmoved, or from zero)."""
        if self.delta is None or counts(self.window[0])[0] == 0:
            return None
        return 100 * self.delta / counts(self.window[0])[0]

    @property
    def emphasised(self) -> bool:
        return self.delta is not None and clears(counts(self.window[0])[0], self.delta)

    @property
    def mechanism(self) -> str | None:
        if self.delta is None:
            return None
        return mechanism(self.delta, counts(self.window[1])[1] - counts(self.window[0])[1])


def counts(row: HistoryRow | None) -> tuple[int, int]:
    """``(tokens, toolCount)`` of a point of a comparable series, which is always measured."""
    assert row is not None and row.tokens is not None and row.toolCount is not None, "not a measured point"
    return row.tokens, row.toolCount


def clears(before: int, delta: int) -> bool:
    """Both thresholds: ``|delta| ≥ 25`` tokens and ``|delta| ≥ 5 %`` of ``before``."""
    return abs(delta) >= TOKENS and 100 * abs(delta) >= PERCENT * before


def mechanism(tokens: int, tools: int) -> str:
    """From the signed changes of totalTokens and toolCount."""
    if tools > 0 and tokens > 0:
        return "more tools"
    if tools < 0 and tokens < 0:
        return "fewer tools"
    if tools == 0 and tokens > 0:
        return "heavier tools"
    if tools == 0 and tokens < 0:
        return "lighter tools"
    return "mixed"


def movement(server: str, series: Series, vectors: VectorHistory) -> Movement:
    """The most recent movement of ``server`` in its comparable ``series``."""
    points = series.points
    if not points:
        return Movement(server, NONE, series)
    latest, start = points[-1], len(points) - 1
    while start > 0 and _same(points[start - 1], latest):
        start -= 1
    if start == 0:
        return Movement(server, UNCHANGED, series, held_since=points[0].date, held_sweeps=len(points))
    before, after = points[start - 1], points[start]
    breakdown, why = _breakdown(vectors, before, after)
    return Movement(server, MOVED, series, before, after, after.date, len(points) - start, breakdown, why)


def _same(a: HistoryRow, b: HistoryRow) -> bool:
    return a.tokens == b.tokens and a.toolCount == b.toolCount


def _breakdown(vectors: VectorHistory, before: HistoryRow, after: HistoryRow) -> tuple[Breakdown | None, str | None]:
    old = at(vectors, before.date, before.tokens, before.toolCount, before.isolation)
    new = at(vectors, after.date, after.tokens, after.toolCount, after.isolation)
    if old is not None and new is not None:
        return attribute(old, new), None
    missing = before.date if old is None else after.date
    if not vectors.vectors:
        return None, f"{UNAVAILABLE}: no tool vectors are on record for this server"
    return None, (f"{UNAVAILABLE}: the tool vectors (from {vectors.vectors[0]['date']}) hold no capture of the "
                  f"{missing} measurement")


def attribute(old: Mapping[str, Any], new: Mapping[str, Any]) -> Breakdown:
    """Per-tool changes from vector ``old`` to vector ``new`` (see module docstring)."""
    before, after = _keyed(old["tools"]), _keyed(new["tools"])
    moves = []
    for k in [*after, *(k for k in before if k not in after)]:
        if before.get(k) != after.get(k):
            moves.append(ToolMove(k[0], before.get(k), after.get(k)))
    moves.sort(key=lambda m: (-abs(m.delta), m.name, m.change))
    total = new["totalTokens"] - old["totalTokens"]
    return Breakdown(tuple(moves), total - sum(m.delta for m in moves))


def _keyed(tools: list[dict]) -> dict[tuple[str, int], tuple[int, int, int]]:
    seen: Counter = Counter()
    out = {}
    for tool in tools:
        seen[tool["name"]] += 1
        out[(tool["name"], seen[tool["name"]])] = (tool["tokens"], tool["descriptionTokens"], tool["inputSchemaTokens"])
    return out


def to_json(movements: list[Movement]) -> dict:
    """The ``results/json`` document (``schemas/schema.json``)."""
    return {"method": METHOD, "thresholds": {"percent": PERCENT, "tokens": TOKENS},
            "servers": [_entry(m) for m in movements]}


def _point(row: HistoryRow | None) -> dict | None:
    return None if row is None else {"date": row.date, "tokens": row.tokens, "toolCount": row.toolCount}


def _entry(m: Movement) -> dict:
    percent = m.percent
    return {
        "server": m.server, "state": m.state,
        "series": {"isolation": m.series.isolation, "starts": m.series.starts},
        "latest": _point(m.latest), "before": _point(m.before), "after": _point(m.after),
        "window": None if m.state != MOVED else {"from": m.window[0].date, "to": m.window[1].date},
        "heldSince": m.held_since, "heldSweeps": m.held_sweeps, "heldDays": m.held_days,
        "delta": m.delta, "percent": None if percent is None else round(percent, 2),
        "emphasised": m.emphasised, "mechanism": m.mechanism,
        "breakdown": None if m.breakdown is None else {
            "tools": [{"name": t.name, "change": t.change, "before": _parts(t.before), "after": _parts(t.after),
                       "delta": t.delta} for t in m.breakdown.tools],
            "attributed": m.breakdown.attributed, "unattributed": m.breakdown.unattributed},
        "breakdownUnavailable": m.unavailable,
    }


def _parts(values: tuple[int, int, int] | None) -> dict | None:
    if values is None:
        return None
    return dict(zip(("tokens", "descriptionTokens", "inputSchemaTokens"), values))


def render_json(document: dict) -> str:
    """File text of a :func:`to_json` document: one server per line (compact JSON; non-ASCII and
    lone surrogates in tool names escaped, so the bytes are always valid UTF-8)."""
    head = json.dumps({k: v for k, v in document.items() if k != "servers"}, separators=(",", ":"))
    lines = ",\n".join(json.dumps(entry, separators=(",", ":")) for entry in document["servers"])
    return head[:-1] + ',"servers":[\n' + lines + "\n]}\n"


def ordered(movements: list[Movement]) -> list[Movement]:
    """Moved servers by size of movement (largest first), then unchanged, then the rest; ties by name."""
    rank = {MOVED: 0, UNCHANGED: 1, NONE: 2}
    return sorted(movements, key=lambda m: (rank[m.state], -abs(m.delta or 0), m.server))


HERE = published.REGRESSIONS_MD
NAME_LIMIT = 80


def change(m: Movement, unit: str = "") -> str:
    """``+2,000 (+20.0%)`` (``unit`` goes after the number); ``(from zero)`` when the earlier
    cost was 0."""
    percent = m.percent
    return f"{m.delta:+,}{unit} ({'from zero' if percent is None else f'{percent:+.1f}%'})"


def held(m: Movement) -> str:
    """``2026-08-26 (3 sweeps, 14 days)``."""
    sweeps = f"{m.held_sweeps} sweep{'s' if m.held_sweeps != 1 else ''}"
    return f"{m.held_since} ({sweeps}, {m.held_days} day{'s' if m.held_days != 1 else ''})"


def thresholds() -> str:
    return f"at least {PERCENT}% and at least {TOKENS} tokens"


def render_md(movements: list[Movement]) -> str:
    """The file text for ``movements`` (one per catalog entry, any order)."""
    items = ordered(movements)
    moved = [m for m in items if m.state == MOVED]
    out = ["# Cost movement", "",
           f"Each server's most recent movement (method {METHOD}): the change that produced the cost it carries "
           "today, found by walking back through the run of identical measurements. Only measurements in the "
           "comparable series are compared — the same-isolation run the trend draws — and a failed sweep is a "
           f"gap, never a drop to zero. **Bold** movements clear both thresholds ({thresholds()}); every "
           f"comparable movement is listed. How it is made: [{site.METHODOLOGY_LABEL}]"
           f"({site.link(HERE, published.METHODOLOGY)}). Machine-readable: "
           f"[regressions.json]({site.link(HERE, published.REGRESSIONS_JSON)}). Back to the "
           f"[leaderboard]({site.link(HERE, published.LEADERBOARD_MD)}).", "",
           f"**{len(moved)} movement{'s' if len(moved) != 1 else ''}**, "
           f"{sum(m.emphasised for m in moved)} clearing both thresholds.", ""]
    out += _moved(moved)
    out += _unchanged([m for m in items if m.state == UNCHANGED])
    out += _none([m for m in items if m.state == NONE])
    return "\n".join(out).rstrip("\n") + "\n"


def _server(m: Movement) -> str:
    page = site.link(HERE, published.server_page(m.server))
    return f"[{md(m.server, NAME_LIMIT)}]({page}#{site.COST_MOVEMENT_ANCHOR})"


def _moved(moved: list[Movement]) -> list[str]:
    out = ["## Movements", ""]
    if not moved:
        return out + ["No comparable series has moved.", ""]
    out += ["| Server | Window | Tokens | Change | Tools | Mechanism | Held since | Per tool |",
            "|---|---|---:|---:|---:|---|---|---|"]
    for m in moved:
        bold = "**" if m.emphasised else ""
        before, after = m.window
        out.append(f"| {bold}{_server(m)}{bold} | {before.date} → {after.date} | "
                   f"{num(before.tokens)} → {num(after.tokens)} | {bold}{change(m)}{bold} | "
                   f"{num(before.toolCount)} → {num(after.toolCount)} | {m.mechanism} | {held(m)} | "
                   f"{_per_tool(m)} |")
    return out + [""]


def _per_tool(m: Movement) -> str:
    if m.breakdown is None:
        return "breakdown unavailable"
    b = m.breakdown
    return f"{len(b.tools)} tool{'s' if len(b.tools) != 1 else ''}, {b.unattributed:+,} unattributed"


def _unchanged(items: list[Movement]) -> list[str]:
    out = ["## No movement in the comparable series", ""]
    if not items:
        return out + ["Every comparable series has moved at least once.", ""]
    out += ["| Server | Tokens | Tools | Held since |", "|---|---:|---:|---|"]
    for m in items:
        latest = m.latest
        out.append(f"| {_server(m)} | {num(latest.tokens if latest else None)} | {num(latest.toolCount if latest else None)} | {held(m)} |")
    return out + [""]


def _none(items: list[Movement]) -> list[str]:
    if not items:
        return []
    return ["## No comparable measurement", "",
            "No sweep of these entries produced a number in their comparable series, so there is nothing to "
            "compare: " + ", ".join(_server(m) for m in items) + ".", ""]
