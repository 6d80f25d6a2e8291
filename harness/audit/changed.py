"""``--changed``: join each local capture to the published capture index by canonicalSha256 (capture-index/v1).

Public: ``load_index``, ``join``, ``section``, ``row_line``, ``tally``. Rule: docs/AUDIT.md, "Against what is published".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from harness.audit import published_reader
from harness.pages.tool_vectors import CAPTURE_INDEX_METHOD
from harness.util.published import CAPTURE_INDEX
from harness.util.untrusted import escape

BEHIND, CURRENT, UNIDENTIFIED = "behind", "current", "unidentified"


@dataclass(frozen=True)
class Changed:
    """The join of one local capture."""

    label: str
    state: str
    sha: str
    server: str | None = None  # the published name; None when unidentified
    tokens: int | None = None  # published totalTokens
    published: str | None = None  # the date the local capture was first published
    current_tokens: int | None = None
    since: str | None = None  # the date the server's current capture became current

    @property
    def delta(self) -> int | None:
        """Tokens moving to the current capture would add (positive) or save (negative), per request."""
        if self.state != BEHIND or self.current_tokens is None or self.tokens is None:
            return None
        return self.current_tokens - self.tokens

    @property
    def name(self) -> str:
        """``label``, or ``label (published as server)`` when they differ (both escaped)."""
        if self.server is None or self.server == self.label:
            return escape(self.label)
        return f"{escape(self.label)} (published as {escape(self.server)})"


def load_index(source: str | Path | None = None, root: Path | None = None) -> dict:
    """The capture index at ``source``, by default the checkout's else the published one. Raises
    ``published_reader.Unavailable``."""
    return published_reader.read(source or published_reader.default_source(CAPTURE_INDEX, root), "capture index", "capture-index")


def join(index: dict, label: str, sha: str) -> Changed:
    """Join the local capture with canonicalSha256 ``sha``, configured as ``label``.

    Of several servers that published the same bytes: the one it is current for, then the one named ``label``,
    then the most recently published, then the first by name."""
    current = index["current"]
    rows = index["captures"].get(sha) or []
    if not rows:
        return Changed(label, UNIDENTIFIED, sha)

    def is_current(row: dict) -> bool:
        return current.get(row["server"], {}).get("canonicalSha256") == sha

    best = min(rows, key=lambda r: (not is_current(r), r["server"] != label, _newest_first(r["date"]), r["server"]))
    now = current.get(best["server"])
    if now is None:  # an index whose current map misses a server it lists: claim nothing
        return Changed(label, UNIDENTIFIED, sha)
    state = CURRENT if is_current(best) else BEHIND
    return Changed(label, state, sha, best["server"], best["totalTokens"], best["date"], now["totalTokens"], now["date"])


def _newest_first(date: str) -> tuple:
    return tuple(-int(part) for part in date.split("-"))


def describe(c: Changed) -> str:
    """One line for a terminal or a report (untrusted text escaped)."""
    if c.state == CURRENT:
        return (f"{c.name}: current — the published capture since {c.since} ({c.tokens:,} tokens); "
                "nothing to update")
    d = c.delta
    if d is not None:
        move = ("would change no tokens" if d == 0 else
                f"would add {d:,} tokens to every request" if d > 0 else f"would save {-d:,} tokens on every request")
        return (f"{c.name}: behind — this capture was published {c.published} ({c.tokens:,} tokens); moving to "
                f"the current one, published {c.since} ({c.current_tokens:,} tokens), {move}")
    return (f"{c.name}: unidentified — canonicalSha256 {escape(c.sha[:12])}… is not a published capture in the "
            "index (a version never measured here, or one published before the index began); nothing is claimed "
            "about it")


class Subject(NamedTuple):
    """One configured server to join, with its identity, configs, status and hash (``None``: no capture)."""

    label: str
    identity: str
    paths: list[str]
    status: str
    sha: str | None


def section(looked: published_reader.Lookup, subjects: list[Subject]) -> dict:
    """The report's ``changed`` section: one row per subject, or the named ``problem`` and no row."""
    rows = []
    if looked.document is not None:
        for s in subjects:
            row = {"name": s.label, "identity": s.identity, "configs": list(s.paths), "status": s.status}
            rows.append(row | _fields(join(looked.document, s.label, s.sha) if s.sha else None))
    return {"method": CAPTURE_INDEX_METHOD, "source": looked.source, "problem": looked.problem, "servers": rows}


def _fields(c: Changed | None) -> dict:
    if c is None:
        return dict.fromkeys(("state", "canonicalSha256", "publishedAs", "tokens", "publishedOn", "currentTokens",
                              "currentSince", "delta"))
    return {"state": c.state, "canonicalSha256": c.sha, "publishedAs": c.server, "tokens": c.tokens,
            "publishedOn": c.published, "currentTokens": c.current_tokens, "currentSince": c.since,
            "delta": c.delta}


def row_line(row: dict) -> str:
    """:func:`describe` of one report row (labels escaped), or why it has no join."""
    if row["state"] is None:
        return f"{escape(row['name'])}: no capture to join ({escape(row['status'])})"
    return describe(Changed(row["name"], row["state"], row["canonicalSha256"], row["publishedAs"], row["tokens"],
                            row["publishedOn"], row["currentTokens"], row["currentSince"]))


def tally(changed: dict) -> str:
    """One sentence saying what the join found (for the gate that records the check was made)."""
    rows = changed["servers"]
    counts = [f"{sum(r['state'] == s for r in rows)} {s}" for s in (BEHIND, CURRENT, UNIDENTIFIED)]
    without = sum(r["state"] is None for r in rows)
    return (f"{len(rows) - without} server(s) joined by canonicalSha256 to the capture index at {changed['source']}: "
            f"{', '.join(counts)}" + (f"; {without} without a capture to join" if without else ""))
