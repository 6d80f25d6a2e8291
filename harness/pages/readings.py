"""The readings published beside the headline, per leaderboard row (issue #14): the Claude
divergence (tools-delta/v1), the mcp-tokens cross-check (cli-cross-check/v1), the capability probe
(capability-probe/v1) and the resources/prompts side figures (side-lists/v1).

One staleness rule for the three run files (spec "Claude divergence", "CLI cross-check"): a row
prints only while the capture it was computed from is still the published one — its
``canonicalSha256`` equals the record's. A stale row stays in its file as data and prints nothing
anywhere (leaderboard, CSV, dashboard, server page). On top of that, a Claude row prints only with
a count (not an error row), and a cross-check row only when the CLI saw the same tool names our
capture holds. Side figures come from the record itself, so they are never stale.

Aggregates (the Claude ratio range, the cross-check residual range) are derived from the current
rows on every regen (:func:`claude_range`, :func:`cross_range`), never written by hand.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from harness.core import side_figures
from harness.core.projection import selection_share
from harness.db import readings_store
from harness.db.history import NUMBERED
from harness.pages.published_records import RecordError
from harness.pages.text import as_int


@dataclass(frozen=True)
class Claude:
    tokens: int  # Anthropic's count of what the tools add to a request
    mapped: int  # o200k of the projection
    headline: int  # o200k of the whole capture
    model: str
    date: str

    @property
    def ratio(self) -> float | None:
        return self.tokens / self.headline if self.headline else None

    @property
    def share(self) -> float:
        """Field-selection share: how much of the headline the projection drops (0–1)."""
        return selection_share(self.headline, self.mapped)


@dataclass(frozen=True)
class Cross:
    cli_tokens: int  # the CLI's tools total
    mapped: int  # ours, same projection
    release: str
    date: str

    @property
    def percent(self) -> float:
        """The CLI's count against ours of the same projection, in percent (0 when both are 0)."""
        return 0.0 if self.mapped == 0 else (self.cli_tokens - self.mapped) * 100.0 / self.mapped


@dataclass(frozen=True)
class Probe:
    gained: tuple[tuple[str, int], ...]
    lost: tuple[tuple[str, int], ...]
    changed: tuple[tuple[str, int], ...]
    delta: int
    date: str


@dataclass(frozen=True)
class Side:
    tokens: int
    floor: bool
    parts: tuple[tuple[str, int | None, int | None, str | None], ...]  # (list, items, tokens, error)


@dataclass(frozen=True)
class Readings:
    claude: Claude | None = None
    cross: Cross | None = None
    probe: Probe | None = None
    side: Side | None = None


def attach(rows: list, root: Path) -> list:
    """``rows`` with ``readings`` filled from the run files under ``root`` and each record.
    Raises :class:`harness.pages.published_records.RecordError` naming an unusable run file (so ``regen``
    reports it like a bad record and writes nothing)."""
    try:
        files = {kind: {r["server"]: r for r in (readings_store.read(root, kind) or {}).get("rows", [])}
                 for kind in readings_store.FILES}
    except readings_store.ReadingsError as exc:
        raise RecordError([str(exc)]) from None
    return [dataclasses.replace(row, readings=for_row(row, files)) for row in rows]


def for_row(row, files: dict[str, dict]) -> Readings:
    """The current readings of one row (``files``: kind → server → run-file row)."""
    record = row.record or {}
    if record.get("status") not in NUMBERED:
        return Readings()
    sha = record.get("canonicalSha256")
    return Readings(claude=_claude(files["divergence"].get(row.name), sha),
                    cross=_cross(files["cross-check"].get(row.name), sha),
                    probe=_probe(files["capability-probe"].get(row.name), sha),
                    side=_side(record.get("sideLists")))


def _claude(d: dict | None, sha) -> Claude | None:
    if not d or d.get("canonicalSha256") != sha or as_int(d.get("claudeTokens")) is None:
        return None
    return Claude(as_int(d["claudeTokens"]), as_int(d["mappedTokens"]), as_int(d["totalTokens"]), d["model"], d["countedAt"])


def _cross(c: dict | None, sha) -> Cross | None:
    if not c or c.get("canonicalSha256") != sha or c.get("status") != "compared":
        return None
    cli = c["cli"]
    if sorted(cli["toolNames"]) != sorted(c["toolNames"]):  # like for like, or silence
        return None
    return Cross(as_int(cli["toolsTokens"]), as_int(c["mappedTokens"]), c["release"], c["checkedAt"])


def _probe(p: dict | None, sha) -> Probe | None:
    if not p or p["withoutCapabilities"].get("canonicalSha256") != sha:
        return None
    tools = lambda key: tuple((t["name"], as_int(t["tokens"])) for t in p[key])  # noqa: E731
    return Probe(tools("gained"), tools("lost"), tools("changed"), as_int(p["deltaTokens"]), p["probedAt"])


def _side(side: object) -> Side | None:
    summed = side_figures.total(side)
    if summed is None:
        return None
    parts = []
    for key, *_ in side_figures.LISTS:
        entry = side.get(key)
        if isinstance(entry, dict):
            parts.append((key, as_int(entry.get("count")), as_int(entry.get("totalTokens")), entry.get("error")))
    return Side(summed[0], summed[1], tuple(parts))


def probe_cell(probe: Probe | None) -> str:
    """The capability probe's cell, worded once for the leaderboard and the dashboard:
    ``floor: 2 more tools, +197 tokens`` (with ``, 1 lost`` / ``, 1 changed`` when there are such
    tools); ``"—"`` without a current probe row."""
    if probe is None:
        return "—"
    gained = len(probe.gained)
    text = f"floor: {gained} more tool{'' if gained == 1 else 's'}"
    text += f", {len(probe.lost)} lost" if probe.lost else ""
    text += f", {len(probe.changed)} changed" if probe.changed else ""
    return f"{text}, {probe.delta:+,} tokens"


def of(row) -> Readings:
    """A row's readings (empty when none were attached)."""
    return getattr(row, "readings", None) or Readings()


def claude_range(rows: list) -> tuple[float, float, int] | None:
    """``(lowest, highest, servers)`` of Claude ÷ o200k over the current Claude rows."""
    ratios = [r for r in (of(row).claude.ratio for row in rows if of(row).claude) if r is not None]
    return (min(ratios), max(ratios), len(ratios)) if ratios else None


def cross_range(rows: list) -> tuple[float, float, int] | None:
    """``(lowest, highest, servers)`` of the printed cross-check percentages."""
    values = [of(row).cross.percent for row in rows if of(row).cross]
    return (min(values), max(values), len(values)) if values else None


def across(span: tuple[float, float, int], kind: str, show, unit: str = "") -> str:
    """A range from :func:`claude_range` / :func:`cross_range` as a sentence without its full stop:
    ``Across the 3 current rows it ranges from 0.16× to 1.44× the headline``, or ``On the 1 current
    row it is 0.72× the headline`` (one value is no range). ``show`` formats a value; without
    ``unit`` the values follow a colon (``Across the 2 printed rows: +0.10% to +0.78%``)."""
    low, high, rows = span
    if rows == 1 or low == high:
        where = f"On the {rows} {kind} row{'' if rows == 1 else 's'}"
        return f"{where} it is {show(low)}{unit}" if unit else f"{where}: {show(low)}"
    where = f"Across the {rows} {kind} rows"
    if unit:
        return f"{where} it ranges from {show(low)} to {show(high)}{unit}"
    return f"{where}: {show(low)} to {show(high)}"


def percent(value: float) -> str:
    """``+0.12%`` / ``-1.50%`` / ``0.00%``."""
    text = f"{value:+.2f}%"
    return "0.00%" if text in ("+0.00%", "-0.00%") else text
