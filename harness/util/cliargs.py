"""argparse types and messages shared by the commands: each input error says what was expected,
with the user's text escaped (``untrusted.escape``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import re
from collections.abc import Iterable

from harness.util.untrusted import escape

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def iso_date(text: str) -> dt.date:
    """``YYYY-MM-DD`` as a date; ``ArgumentTypeError`` otherwise."""
    if _ISO_DATE.fullmatch(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD (e.g. 2026-11-30), got '{escape(text)}'")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """A ``(did you mean ...)`` suffix, or ``""``."""
    near = difflib.get_close_matches(name, sorted(set(known)), n=1)
    return f' (did you mean "{escape(near[0])}"?)' if near else ""


def unknown_names(wanted: Iterable[str], known: Iterable[str], what: str) -> str:
    """One line naming each missing name with a suggestion; ``""`` if none."""
    known = list(known)
    missing = [n for n in wanted if n not in known]
    return f"{what}: " + ", ".join(f"{escape(n)}{did_you_mean(n, known)}" for n in missing) if missing else ""


def positive_int(text: str) -> int:
    cleaned = text.replace(",", "").replace("_", "")
    try:
        value = int(cleaned) if len(cleaned) <= 12 else 0
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 999,999,999,999, got '{escape(text[:40])}'")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text) if len(text) <= 32 else 0.0
    except ValueError:
        value = 0.0
    if not 1 <= value <= 600:
        raise argparse.ArgumentTypeError(f"expected seconds between 1 and 600, got '{escape(text[:40])}'")
    return value
