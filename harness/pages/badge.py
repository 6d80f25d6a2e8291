"""shields.io endpoint badges (``badges/<server>.json``): :func:`badge_for`, :func:`write_badge`,
:func:`stage_badges`. Colours: docs/METHODOLOGY.md, "Colour bands".
"""

from __future__ import annotations

from pathlib import Path

from harness.core.record import NUMBERED, Record
from harness.core import bands
from harness.core.canonical import stringify
from harness.db import confine
from harness.util import atomic, published, schemas

LABEL = "context cost"
MAX_BADGE_BYTES = 64 * 1024  # a badge is under 200 bytes


def badge_for(status: str, tokens: int | None) -> dict:
    """The badge document for a record's ``status`` and ``totalTokens`` (tokens, or ``None``)."""
    if status in NUMBERED and tokens is not None:
        message = f"{tokens:,} tokens" if tokens != 1 else "1 token"
        return {"schemaVersion": 1, "label": LABEL, "message": message, "color": bands.color_for(tokens)}
    return {"schemaVersion": 1, "label": LABEL, "message": status, "color": bands.NOT_MEASURED_COLOR}


def write_badge(path: Path, badge: dict) -> Path:
    """Validate ``badge`` against ``schemas/badge.schema.json`` and write it atomically.

    Raises ``harness.util.schemas.SchemaViolation`` (nothing written) when it does not validate.
    """
    schemas.check("badge", badge, where=str(path))
    return atomic.write_text(path, stringify(badge, indent=2) + "\n")


def stage_badges(records: dict[str, Record], root: Path, staging) -> list[str]:
    """Stage ``badges/<server>.json`` (via ``staging.write_text``) for every record whose badge
    text changed; returns the repository paths staged. Raises ``SchemaViolation`` for a bad badge."""
    staged = []
    for server, rec in sorted(records.items()):
        relative = published.badge(server)
        tokens = rec["totalTokens"]
        badge = badge_for(rec["status"], int(tokens) if isinstance(tokens, float) else tokens)
        schemas.check("badge", badge, where=relative)
        text = stringify(badge, indent=2) + "\n"
        if _read_text(Path(root), relative) != text:
            staging.write_text(relative, text)
            staged.append(relative)
    return staged


def _read_text(root: Path, relative: str) -> str | None:
    """The committed badge, or ``None`` (absent, a link, not a regular file, too large: rewritten,
    and the writer refuses a link)."""
    try:
        return confine.read_bytes(root, root / relative, MAX_BADGE_BYTES).decode("utf-8")
    except (OSError, ValueError):  # ValueError: bounded.TooLarge, UnicodeDecodeError
        return None
