"""Argument parsing helpers shared by the commands, so every input error says what was expected
and what to type instead (issue #15, "Input errors a person can act on").

Messages quote the user's text through :func:`harness.util.untrusted.escape`: it may have come from
a script or a config and reaches a terminal or a CI log.
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
    """``YYYY-MM-DD`` as a ``date``; anything else raises ``argparse.ArgumentTypeError`` naming the
    expected format (argparse then prints it and exits 2)."""
    if _ISO_DATE.fullmatch(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD (e.g. 2026-11-30), got '{escape(text)}'")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``' (did you mean "memory"?)'`` for the closest of ``known`` (difflib ratio ≥ 0.6), else ``""``."""
    near = difflib.get_close_matches(name, sorted(set(known)), n=1)
    return f' (did you mean "{escape(near[0])}"?)' if near else ""


def unknown_names(wanted: Iterable[str], known: Iterable[str], what: str) -> str:
    """One line naming every name of ``wanted`` missing from ``known``, each with its suggestion:
    ``--only names not in servers.yaml: memroy (did you mean "memory"?), fecth (...)``."""
    known = list(known)
    missing = [n for n in wanted if n not in known]
    return f"{what}: " + ", ".join(f"{escape(n)}{did_you_mean(n, known)}" for n in missing) if missing else ""


def positive_int(text: str) -> int:
    """A count option (``--concurrency``, ``--top``, ``--context``): a whole number of at least 1,
    thousands separators ``,``/``_`` allowed, at most 12 digits; anything else raises
    ``argparse.ArgumentTypeError`` saying what was expected (argparse prints it and exits 2)."""
    cleaned = text.replace(",", "").replace("_", "")
    try:
        value = int(cleaned) if len(cleaned) <= 12 else 0
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 999,999,999,999, got '{escape(text[:40])}'")
    return value


def seconds(text: str) -> float:
    """A time budget in seconds, 1–600 (``measure``, ``audit`` and ``verify --timeout``); anything
    else (a text longer than 32 characters too) raises ``argparse.ArgumentTypeError``."""
    try:
        value = float(text) if len(text) <= 32 else 0.0
    except ValueError:
        value = 0.0
    if not 1 <= value <= 600:
        raise argparse.ArgumentTypeError(f"expected seconds between 1 and 600, got '{escape(text[:40])}'")
    return value
