"""What a catalog entry's strings and environment and header names may hold, beyond what its JSON Schema
says (docs/SECURITY.md, 'Bounded input'): ``check_strings``, ``check_env_names`` and ``show``, the short
escaped rendering of a value that catalog messages quote. Each problem is one ``add(path, message)`` call.
"""
from __future__ import annotations

import json
import re

from harness.probe import envnames
from harness.util import untrusted

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
FORBIDDEN = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}\\ud800-\\udfff]")
FORBIDDEN_IN_TEXT = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}\\ud800-\\udfff]")
FREE_TEXT_FIELDS = ("notes", "notApplicable")
HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
ENV_RULE = ("an upper-case environment variable name (^[A-Z_][A-Z0-9_]*$, at most "
            f"{envnames.MAX_ENV_NAME_LENGTH} characters)")
HEADERS_RULE = "a list of distinct HTTP header names"


def show(value: object) -> str:
    """A short, one-line, escaped rendering of a value for an error message (bounded work)."""
    try:
        text = json.dumps(_clip(value), ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(value))
    return untrusted.escape(text if len(text) <= 80 else text[:77] + "...")


def _clip(value: object, depth: int = 0) -> object:
    if depth > 3:
        return "..."
    if isinstance(value, str):
        return value[:100]
    if isinstance(value, list):
        return [_clip(v, depth + 1) for v in value[:10]]
    if isinstance(value, dict):
        return {str(k)[:100]: _clip(v, depth + 1) for k, v in list(value.items())[:10]}
    return value


def check_strings(item: dict, path: list, add, flagged: set) -> None:
    """Every string of an entry is valid Unicode without control or bidi characters (tabs and line
    breaks in free text); ``flagged`` paths are not reported twice.
    """
    for field, value in item.items():
        if not isinstance(field, str):
            continue
        forbidden = FORBIDDEN_IN_TEXT if field in FREE_TEXT_FIELDS else FORBIDDEN
        for label, text, where in _strings(field, value):
            bad = forbidden.search(text)
            if bad and tuple(path + where) not in flagged:
                add(path + where, f"{label}: contains the character U+{ord(bad.group(0)):04X}, which "
                                  "is not allowed here (control, bidirectional or invalid Unicode)")


def _strings(field: str, value: object):
    if isinstance(value, str):
        yield f'field "{field}"', value, [field]
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield f'field "{field}" item #{index + 1}', item, [field, index]
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                label = f'field "{field}.{untrusted.escape(key)}"'
                yield label, key, [field, key]
                if isinstance(item, str):
                    yield label, item, [field, key]


def check_env_names(item: dict, path: list, add, flagged: set) -> None:
    """``env`` and ``setEnv`` names: full-match, none refused by ``probe.envnames``; header names too."""
    declared = got if isinstance(got := item.get("env"), list) else []
    fixed = list(got) if isinstance(got := item.get("setEnv"), dict) else []
    for label, name, where in ([(f'field "env" item #{n + 1}', v, ["env", n]) for n, v in enumerate(declared)]
                               + [(f'field "setEnv.{untrusted.escape(k)}"', k, ["setEnv", k]) for k in fixed]):
        if not isinstance(name, str) or tuple(path + where) in flagged:
            continue  # the schema or the character check already said what is wrong
        if not ENV_NAME.fullmatch(name) or len(name) > envnames.MAX_ENV_NAME_LENGTH:
            add(path + where, f"{label}: expected {ENV_RULE}, got {show(name)}")
        elif (refused := envnames.refusal(name)) is not None:
            add(path + where, f"{label}: {show(name)} is refused: it {refused}")
    headers = got if isinstance(got := item.get("headers"), list) else []
    for n, header in enumerate(headers):
        if isinstance(header, str) and tuple(path + ["headers", n]) not in flagged \
                and not (HEADER_NAME.fullmatch(header) and len(header) <= 128):
            add(path + ["headers", n], f'field "headers" item #{n + 1}: expected {HEADERS_RULE}, '
                                       f"got {show(header)}")
