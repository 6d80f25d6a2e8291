"""Colour bands for a token count: ``color_for``, ``band_for`` (docs/METHODOLOGY.md, 'Colour bands')."""

from __future__ import annotations

BANDS = ((1_000, "brightgreen", "lean"), (5_000, "green", "light"), (15_000, "yellow", "moderate"),
         (30_000, "orange", "heavy"), (None, "red", "very heavy"))
NOT_MEASURED_COLOR = "lightgrey"
CONTEXT_WINDOW = 200_000  # the context window a share is given against (pages, audit --context)
CONTEXT_LABEL = f"{CONTEXT_WINDOW // 1000}k"  # as the pages name it ("of 200k")


def color_for(tokens: int | None) -> str:
    """The shields colour for ``tokens``; ``lightgrey`` for ``None``."""
    return band_for(tokens)[0]


def band_for(tokens: int | None) -> tuple[str, str]:
    """``(colour, band label)`` for ``tokens``; ``("lightgrey", "not measured")`` for ``None``."""
    if tokens is None:
        return NOT_MEASURED_COLOR, "not measured"
    for upper, colour, label in BANDS:
        if upper is None or tokens < upper:
            return colour, label
    raise AssertionError("unreachable")
