"""``results/regressions.md``: every server's most recent cost movement (method cost-regression/v1;
see :mod:`harness.pages.regressions` for the rules), linked from the leaderboard, the dashboard
and each server page's "Cost movement" section, which carries the per-tool table.

Sections: movements (every comparable one, largest first; **bold** when it clears both thresholds),
servers whose comparable series never moved, servers with no comparable measurement. Recorded
text goes through ``mdescape.md``; the same facts are in ``results/regressions.json``.
"""

from __future__ import annotations

from harness.pages import site
from harness.pages.mdescape import md
from harness.pages.regressions import METHOD, MOVED, NONE, PERCENT, TOKENS, UNCHANGED, Movement, ordered
from harness.pages.text import num
from harness.util import published

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


def render(movements: list[Movement]) -> str:
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
        out.append(f"| {bold}{_server(m)}{bold} | {m.before.date} → {m.after.date} | "
                   f"{num(m.before.tokens)} → {num(m.after.tokens)} | {bold}{change(m)}{bold} | "
                   f"{num(m.before.toolCount)} → {num(m.after.toolCount)} | {m.mechanism} | {held(m)} | "
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
        out.append(f"| {_server(m)} | {num(m.latest.tokens)} | {num(m.latest.toolCount)} | {held(m)} |")
    return out + [""]


def _none(items: list[Movement]) -> list[str]:
    if not items:
        return []
    return ["## No comparable measurement", "",
            "No sweep of these entries produced a number in their comparable series, so there is nothing to "
            "compare: " + ", ".join(_server(m) for m in items) + ".", ""]
