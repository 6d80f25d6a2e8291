"""Claude Code's deferral posture, resolved from three variables as the methodology's table reads them.

Public: ``resolve``, ``resolve_variable``, ``show``. Rule: docs/METHODOLOGY.md, "Where it is deferred away".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from harness.audit.claude_settings import MANAGED, SHELL, Place
from harness.audit.model import UNREADABLE

CCDEB, ETS, BASE_URL = "CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS", "ENABLE_TOOL_SEARCH", "ANTHROPIC_BASE_URL"
VARIABLES = (CCDEB, ETS, BASE_URL)
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
FIRST_PARTY_HOST = "api.anthropic.com"
DEFAULT_AUTO_PERCENT = 10
_AUTO = re.compile(r"auto(?::(\d{1,3}))?")

# Refusal kinds (spec, "What it refuses to answer"). The first four are the ways a machine can fail
# to state a posture readably; three of them the reader can answer by looking at the place named.
CONFLICT = "conflicting-places"
UNREADABLE_FILE = "unreadable-settings-file"
UNREADABLE_VALUE = "unreadable-value"
UNDOCUMENTED = "undocumented-value"
STRADDLES = "threshold-straddles"
COLLAPSED = "collapsed-entries"
MANAGED_MCP_UNREADABLE = "managed-mcp-unreadable"
MCP_CONFIG_UNREADABLE = "mcp-config-unreadable"  # ~/.claude.json or .mcp.json: which servers load is unknown
ORG_OVERRIDE = "organisation-override"
REFUSALS = (CONFLICT, UNREADABLE_FILE, UNREADABLE_VALUE, UNDOCUMENTED, STRADDLES, COLLAPSED,
            MANAGED_MCP_UNREADABLE, MCP_CONFIG_UNREADABLE, ORG_OVERRIDE)
ANSWERABLE = (CONFLICT, UNREADABLE_FILE, UNREADABLE_VALUE, ORG_OVERRIDE, MANAGED_MCP_UNREADABLE, MCP_CONFIG_UNREADABLE)

UP_FRONT, DEFERRED, THRESHOLD, REFUSED = "loads-up-front", "deferred", "threshold", "refused"


@dataclass(frozen=True)
class Refusal:
    """A named non-answer: ``kind`` (one of ``REFUSALS``), its ``variable`` and a ``detail`` (never env values)."""

    kind: str
    detail: str
    variable: str | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "variable": self.variable, "detail": self.detail,
                "answerableByReader": self.kind in ANSWERABLE}


@dataclass
class Reading:
    """What one variable resolved to."""

    variable: str
    state: str  # unset, value, unreadable-value or refused
    value: str | None = None  # the string, for state value
    json_type: str | None = None  # what was there, for unreadable-value
    place: str | None = None  # the place whose setting is in force
    refusal: Refusal | None = None
    setters: list[str] = field(default_factory=list)  # every place that sets it

    def to_json(self) -> dict:
        reading = None if self.value is None else show(self.variable, self.value)
        return {"variable": self.variable, "state": self.state, "reading": reading,
                "jsonType": self.json_type, "place": self.place, "setBy": self.setters,
                "refusal": self.refusal.to_json() if self.refusal else None}


@dataclass
class Posture:
    """The resolved posture, who decided it, why, and the readings consulted in order."""

    kind: str
    reason: str
    decided_by: str = "default"
    percent: int | None = None
    refusal: Refusal | None = None
    readings: list[Reading] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"posture": self.kind, "thresholdPercent": self.percent, "decidedBy": self.decided_by,
                "reason": self.reason, "refusal": self.refusal.to_json() if self.refusal else None,
                "readings": [r.to_json() for r in self.readings]}


def resolve(places: list[Place]) -> Posture:
    """The posture ``places`` (the shell and the settings places, any order) put in force."""
    readings = []
    ccdeb = resolve_variable(CCDEB, places)
    readings.append(ccdeb)
    decided = _ccdeb(ccdeb, places)
    if decided is not None:
        decided.readings = readings
        return decided
    ets = resolve_variable(ETS, places)
    readings.append(ets)
    decided = _ets(ets)
    if decided is None:
        base = resolve_variable(BASE_URL, places)
        readings.append(base)
        decided = _base_url(base, readings[0])
    decided.readings = readings
    return decided


def resolve_variable(variable: str, places: list[Place]) -> Reading:
    """Which value of ``variable`` is in force across ``places`` (see module doc)."""
    setters = [p.name for p in places if variable in p.env]
    settings = _from_settings(variable, [p for p in places if p.tier != SHELL])
    shell = next((p for p in places if p.tier == SHELL and variable in p.env), None)
    settings.setters = setters
    if shell is None:
        return settings
    if settings.state == "unset":
        return Reading(variable, "value", value=str(shell.env[variable]), place=shell.name, setters=setters)
    if settings.state == "value" and settings.value == shell.env[variable]:
        settings.place = f"{shell.name} and {settings.place}"
        return settings
    if settings.state == "refused":
        return settings
    return _refused(CONFLICT, variable, setters, f"the shell and {settings.place} both set {variable} "
                    f"({show(variable, shell.env[variable])} and {_shown(settings)}) and no order between them is "
                    "on record")


def _from_settings(variable: str, places: list[Place]) -> Reading:
    managed = [p for p in places if p.tier == MANAGED]
    unreadable = next((p for p in managed if p.state == UNREADABLE), None)
    if unreadable is not None:
        return _refused(UNREADABLE_FILE, variable, [], f"{unreadable.name} exists and cannot be read, so what it "
                        f"sets for {variable} is unknown rather than nothing ({unreadable.error})")
    setting = [p for p in managed if variable in p.env]
    if len({_canonical(p.env[variable]) for p in setting}) > 1:
        names = " and ".join(f"{p.name} ({_shown_raw(variable, p.env[variable])})" for p in setting)
        return _refused(CONFLICT, variable, [], f"{names} set {variable} differently; they are one merged source and "
                        "which file wins is not on record")
    if setting:
        return _reading(variable, setting[0])
    for place in places:
        if place.tier == MANAGED:
            continue
        if place.state == UNREADABLE:
            return _refused(UNREADABLE_FILE, variable, [], f"{place.name} exists and cannot be read, so what it "
                            f"sets for {variable} is unknown rather than nothing ({place.error})")
        if variable in place.env:
            return _reading(variable, place)
    return Reading(variable, "unset")


def _reading(variable: str, place: Place) -> Reading:
    raw = place.env[variable]
    if isinstance(raw, str):
        return Reading(variable, "value", value=raw, place=place.name)
    return Reading(variable, "unreadable-value", json_type=_json_type(raw), place=place.name)


def _ccdeb(reading: Reading, places: list[Place]) -> Posture | None:
    if reading.state == "unset":
        return None
    if reading.state != "value" or reading.value is None:
        return _refuse_reading(reading)
    word = reading.value.lower()
    if word in FALSE_WORDS:
        return None
    if word not in TRUE_WORDS:
        return _posture_refused(Refusal(UNDOCUMENTED, f"{reading.place} sets {CCDEB} to {show(CCDEB, reading.value)}, "
                                        "which is neither a true nor a false reading", CCDEB))
    override = _managed_override(places)
    if override is not None:
        return _posture_refused(override)
    return Posture(UP_FRONT, f"{CCDEB} reads as true in {reading.place}: tool search is off and every definition "
                   "loads at session start", decided_by=f"{CCDEB} in {reading.place}")


def _managed_override(places: list[Place]) -> Refusal | None:
    """The organisation override: the managed tier setting ENABLE_TOOL_SEARCH to an undocumented value."""
    for place in places:
        if place.tier == MANAGED and ETS in place.env and not _documented_ets(place.env[ETS]):
            return Refusal(ORG_OVERRIDE, f"{place.name} sets {ETS} to {_shown_raw(ETS, place.env[ETS])}, a value the "
                           f"vendor does not document, while {CCDEB} reads as true: from v2.1.227 the managed tier can keep "
                           "tool search on under that variable, so it no longer decides — check the value", ETS)
    return None


def _ets(reading: Reading) -> Posture | None:
    if reading.state == "unset":
        return None
    if reading.state != "value" or reading.value is None:
        return _refuse_reading(reading)
    value, where = reading.value, f"{ETS} in {reading.place}"
    if value == "true":
        return Posture(DEFERRED, f"{ETS}=true: every definition deferred, at any size", decided_by=where)
    if value == "false":
        return Posture(UP_FRONT, f"{ETS}=false: every definition loads at session start", decided_by=where)
    match = _AUTO.fullmatch(value)
    if match and (match.group(1) is None or 0 <= int(match.group(1)) <= 100):
        percent = DEFAULT_AUTO_PERCENT if match.group(1) is None else int(match.group(1))
        return Posture(THRESHOLD, f"{ETS}={value}: deferred once the definitions reach {percent}% of the context "
                       "window", decided_by=where, percent=percent)
    return _posture_refused(Refusal(UNDOCUMENTED, f"{reading.place} sets {ETS} to {show(ETS, value)}, which the "
                                    "documentation does not list", ETS))


def _base_url(reading: Reading, ccdeb: Reading) -> Posture:
    """``ANTHROPIC_BASE_URL`` decides; ``ccdeb`` is named in the sentence when it was set to false."""
    if reading.state == "unset":
        if ccdeb.state == "value" and ccdeb.value is not None:
            return Posture(DEFERRED, f"{CCDEB}={show(CCDEB, ccdeb.value)} in {ccdeb.place} reads as false and neither "
                           f"{ETS} nor {BASE_URL} is set: the documented default, every definition deferred, no "
                           "threshold", decided_by=f"{CCDEB} in {ccdeb.place}")
        return Posture(DEFERRED, "nothing sets the three variables: the documented default, every definition "
                       "deferred, no threshold")
    if reading.state != "value" or reading.value is None:
        return _refuse_reading(reading)
    host = _host(reading.value)
    where = f"{BASE_URL} in {reading.place}"
    if host == FIRST_PARTY_HOST:
        return Posture(DEFERRED, f"{BASE_URL} points at {FIRST_PARTY_HOST}: the documented default, every definition "
                       "deferred, no threshold", decided_by=where)
    what = f"points at {host}" if host else "does not parse as a URL"
    return Posture(UP_FRONT, f"{BASE_URL} {what} and {ETS} is unset: tool search is off, every definition loads at "
                   "session start", decided_by=where)


def _refuse_reading(reading: Reading) -> Posture:
    if reading.state == "refused" and reading.refusal is not None:
        return _posture_refused(reading.refusal)
    return _posture_refused(Refusal(UNREADABLE_VALUE, f"{reading.place} sets {reading.variable} to a JSON "
                                    f"{reading.json_type}, not a string: it is set there and what it is set to is "
                                    "unknown, so whether these tokens are deferred cannot be said from it",
                                    reading.variable))


def _posture_refused(refusal: Refusal) -> Posture:
    return Posture(REFUSED, refusal.detail, decided_by="refused", refusal=refusal)


def _refused(kind: str, variable: str, setters: list[str], detail: str) -> Reading:
    return Reading(variable, "refused", refusal=Refusal(kind, detail, variable), setters=setters)


def _documented_ets(raw: object) -> bool:
    if not isinstance(raw, str):
        return False
    match = _AUTO.fullmatch(raw)
    return raw in ("true", "false") or bool(match and (match.group(1) is None or int(match.group(1)) <= 100))


def _host(value: str) -> str | None:
    try:
        host = urlsplit(value.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def show(variable: str, value: str) -> str:
    """A value as printed: ANTHROPIC_BASE_URL by its host only (it can hold a credential), others quoted and cut."""
    if variable == BASE_URL:
        host = _host(value)
        return f"host {host}" if host else "a value that does not parse as a URL"
    return repr(value[:80] + ("…" if len(value) > 80 else ""))


def _shown(reading: Reading) -> str:
    value = reading.value if reading.state == "value" else None
    return f"a JSON {reading.json_type}" if value is None else show(reading.variable, value)


def _shown_raw(variable: str, raw: object) -> str:
    return show(variable, raw) if isinstance(raw, str) else f"a JSON {_json_type(raw)}"


def _canonical(raw: object) -> str:
    return f"{type(raw).__name__}:{raw!r}"


def _json_type(raw: object) -> str:
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "boolean"
    if isinstance(raw, (int, float)):
        return "number"
    return "array" if isinstance(raw, list) else "object"
