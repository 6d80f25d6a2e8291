"""Keep secret values out of everything the harness writes or prints: ``Secrets``, ``activated``, ``cut``.
docs/SECURITY.md, "Secrets and redaction".
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, overload

from harness.core.canonical import number_to_string
from harness.probe import server_env
from harness.probe.server_env import header_env_name
from harness.probe.process import SpawnError, split_command
from harness.util import urls

MASK = "[redacted]"
MIN_SECRET_LENGTH = 4  # shorter values would mangle ordinary text and are not credentials
RUN_LENGTH = 8  # a run of this many consecutive characters of a secret's form is redacted
CUT_MARGIN = 512  # characters (or bytes) a transport keeps beyond a display limit for redaction to see
_STRIDE = 4  # see Secrets._spans: every run of RUN_LENGTH holds an aligned _STRIDE-gram
_CHUNK = 1 << 20  # long texts are searched in overlapping chunks (bounded memory for the views)
_OVERLAP = 4096
_CACHED_LENGTH, _CACHE_SIZE = 64, 20_000
_ENCODED_UP_TO = 8192
MAX_RUNS = 400_000  # run positions indexed over every value's forms (see Secrets._built)
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
# A high+low pair of escapes (how JSON writes a character outside the BMP, ``\\ud83d\\udd11``) first,
# so the reading holds the character itself, then any single escape.
_JSON_ESCAPE = re.compile(r'\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}'
                          r'|\\(?:u[0-9A-Fa-f]{4}|["\\/bfnrt])')
_JSON_NAMED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class Secrets:
    """An immutable set of secret values and their redaction."""

    def __init__(self, values: Iterable[str] = ()):
        unique = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH
                  and not v.startswith(server_env.DUMMY_PREFIX) and v != MASK}
        self.values: tuple[str, ...] = tuple(sorted(unique, key=lambda v: (-len(v), v)))
        self._tables: tuple[tuple[str, ...], frozenset, frozenset] | None = None  # built on first use
        self._seen: dict[str, str] = {}  # short strings repeat (keys, types): redact each once

    @property
    def _whole(self) -> tuple[str, ...]:
        return self._built()[0]

    @property
    def _runs(self) -> frozenset:
        return self._built()[1]

    @property
    def _grams(self) -> frozenset:
        return self._built()[2]

    def _built(self) -> tuple[tuple[str, ...], frozenset, frozenset]:
        """The search tables, built on first use; past ``MAX_RUNS``, forms are matched whole only."""
        if self._tables is not None:
            return self._tables
        whole: set[str] = set()
        indexed: list[str] = []
        budget = MAX_RUNS
        by_length = sorted(self.values, key=len)
        # Each value as written first, then every other spelling: a fragment of the value itself is
        # the likeliest echo, so it keeps run matching longest.
        spellings = [[v] for v in by_length] + [sorted(_forms(v) - {v}) for v in by_length]
        for forms in spellings:
            long = [f for f in forms if len(f) >= RUN_LENGTH]
            cost = sum(len(f) - RUN_LENGTH + 1 for f in long)
            if cost <= budget:
                budget -= cost
                indexed += long
                whole.update(f for f in forms if len(f) < RUN_LENGTH)
            else:
                whole.update(forms)
        runs = frozenset(f[i:i + RUN_LENGTH] for f in indexed for i in range(len(f) - RUN_LENGTH + 1))
        # Every aligned _STRIDE-gram of a run is a _STRIDE-gram of its form: taken from the forms,
        # one slice per position instead of one per gram of every run.
        grams = frozenset(f[i:i + _STRIDE] for f in indexed for i in range(len(f) - _STRIDE + 1))
        self._tables = (tuple(sorted(whole, key=len, reverse=True)), runs, grams)
        return self._tables

    @classmethod
    def handed(cls, env: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None,
               argv: Iterable[str] = (), url: str | None = None) -> "Secrets":
        """The secrets among what a server is handed (``handed_values``)."""
        return cls(handed_values(env, headers, argv, url))

    @classmethod
    def for_target(cls, target, environ: Mapping[str, str] | None = None) -> "Secrets":
        """The secrets a measurement of ``target`` hands its server, read from ``environ`` (default
        ``os.environ``)."""
        environ = os.environ if environ is None else environ
        env = {name: environ[name] for name in target.env if name in environ}
        headers = {h: environ[header_env_name(h)] for h in target.headers if header_env_name(h) in environ}
        try:
            argv = split_command(target.command) if target.command else []
        except SpawnError:
            argv = str(target.command).split()
        return cls.handed(env, headers, argv, target.url) | cls(server_env.host_secrets(environ))

    @classmethod
    def for_names(cls, names: Iterable[str], extra: Iterable[str] = ()) -> "Secrets":
        """The host values of env ``names`` plus ``extra`` literal values."""
        return cls([os.environ.get(name, "") for name in names] + list(extra))

    def __or__(self, other: "Secrets") -> "Secrets":
        return Secrets(self.values + other.values)

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:  # never the values themselves
        return f"<Secrets: {len(self.values)} value(s)>"

    @overload
    def text(self, value: str) -> str: ...
    @overload
    def text(self, value: None) -> None: ...

    def text(self, value: str | None) -> str | None:
        """``value`` with every occurrence replaced by ``[redacted]``; a non-string is returned unchanged."""
        if not self.values or not isinstance(value, str) or len(value) < MIN_SECRET_LENGTH:
            return value
        if len(value) > _CACHED_LENGTH:
            return self._redact(value)
        clean = self._seen.get(value)
        if clean is None:
            if len(self._seen) >= _CACHE_SIZE:
                self._seen.clear()
            clean = self._seen[value] = self._redact(value)
        return clean

    def _redact(self, value: str) -> str:
        for _ in range(3):  # masking can only create a new match if a secret contains MASK's text
            spans = _merge(self._spans(value))
            if not spans:
                return value
            value = _mask(value, spans)
        return value

    def found(self, value: str) -> bool:
        """Whether ``value`` holds an occurrence of a secret."""
        return bool(self.values) and isinstance(value, str) and bool(self._spans(value))

    def json(self, value: Any, numbers: bool = True) -> tuple[Any, bool]:
        """``(value redacted, whether anything changed)``; with ``numbers``, numbers holding a secret too."""
        if not self.values:
            return value, False
        changed = False

        def walk(node):
            nonlocal changed
            if isinstance(node, str):
                clean = self.text(node)
                changed |= clean != node
                return clean
            if numbers and isinstance(node, (int, float)) and not isinstance(node, bool) and self._in_number(node):
                changed = True
                return MASK
            if isinstance(node, list):
                return [walk(item) for item in node]
            if isinstance(node, dict):
                return {walk(key): walk(item) for key, item in node.items()}
            return node

        return walk(value), changed

    def scrub(self, value: object) -> object:
        """``value`` with every secret in its strings and keys redacted; numbers are left alone."""
        return self.json(value, numbers=False)[0]

    def _in_number(self, number: int | float) -> bool:
        try:
            text = number_to_string(float(number))
        except OverflowError:  # an int beyond a double: JSON.parse never yields one
            text = str(number)
        return self.found(text)

    @overload
    def cut(self, value: str, limit: int) -> str: ...
    @overload
    def cut(self, value: None, limit: int) -> None: ...

    def cut(self, value: str | None, limit: int) -> str | None:
        """Redact, then keep the first ``limit`` characters (a cut secret would no longer be found)."""
        if value is None:
            return None
        return self.text(value[:limit + CUT_MARGIN])[:limit]

    def cut_tail(self, value: str, limit_bytes: int) -> str:
        """Redact, then keep the last ``limit_bytes`` bytes of the UTF-8 text."""
        value = self.text(value[-(limit_bytes + CUT_MARGIN):])
        data = value.encode("utf-8", "surrogatepass")
        return data[-limit_bytes:].decode("utf-8", "ignore") if len(data) > limit_bytes else value

    def _spans(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        start = 0
        while True:
            chunk = text[start:start + _CHUNK]
            for view, starts in _views(chunk):
                for a, b in self._spans_in(view):
                    spans.append((start + (starts[a] if starts else a), start + (starts[b] if starts else b)))
            if start + _CHUNK >= len(text):
                return spans
            start += _CHUNK - _OVERLAP

    def _spans_in(self, s: str) -> Iterator[tuple[int, int]]:
        for form in self._whole:
            i = s.find(form)
            while i != -1:
                yield i, i + len(form)
                i = s.find(form, i + 1)
        if not self._runs:
            return
        runs, grams, last = self._runs, self._grams, len(s) - RUN_LENGTH
        # A run at i holds the _STRIDE-gram at the next multiple p of _STRIDE (i <= p <= i+3), so
        # only those grams are looked up, and only around a hit are the runs themselves checked.
        for p in range(0, len(s) - _STRIDE + 1, _STRIDE):
            if s[p:p + _STRIDE] in grams:
                for i in range(max(0, p - (RUN_LENGTH - _STRIDE)), min(p, last) + 1):
                    if s[i:i + RUN_LENGTH] in runs:
                        yield i, i + RUN_LENGTH


# A filesystem path (absolute, home-relative or relative; no white space, no ``:``/``@``/``?``/``=``
# past a drive letter, so never a URL, userinfo or a query) and the flags and levels a config sets.
_PATH = re.compile(r"(?:/|~/|\./|\.\./|[A-Za-z]:[\\/])[^\s:@?#=]*")
_FLAG = re.compile(r"true|false|yes|no|on|off|none|trace|debug|info|warn|warning|error|fatal|stdio|http|https|sse|"
                   r"dev|development|prod|production|test|local|\d{1,5}", re.IGNORECASE)
# A run of letters and digits mixing upper case, lower case and digits: random text (base64 holds
# "/", so a key can read as a path), not the name of a folder a person chose.
_RANDOM_RUN = re.compile(r"(?=[A-Za-z0-9+]*[A-Z])(?=[A-Za-z0-9+]*[a-z])(?=[A-Za-z0-9+]*[0-9])[A-Za-z0-9+]{12,}")


def public_value(name: str, value: str) -> bool:
    """Whether env ``name``'s value is public by nature (a path or flag under a non-secret name)."""
    if not isinstance(value, str) or server_env.SECRET_OPTION.search(name or "") or \
            server_env.KNOWN_TOKEN.search(value) or _RANDOM_RUN.search(value):
        return False
    return bool(_PATH.fullmatch(value) or _FLAG.fullmatch(value))


def handed_values(env: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None,
                  argv: Iterable[str] = (), url: str | None = None) -> list[str]:
    """The values ``Secrets.handed`` builds a set from, for callers that gather many first."""
    values = [value for name, value in (env or {}).items() if not public_value(name, value)]
    for value in (headers or {}).values():
        values += server_env.header_secrets(value)
    values += server_env.argv_secrets(list(argv))
    values += server_env.url_secrets(url or "")
    # and what the URL printer masks (a fragment, a path segment) when it reads as a credential
    values += [v for v in urls.credentials(url or "") if server_env.credential_like(v)]
    return values


NONE = Secrets()
Redactor = Secrets  # an alias other packages import
_ACTIVE: ContextVar[Secrets] = ContextVar("mcp_context_cost_secrets", default=NONE)


_CARRIED = "_mcp_context_cost_secrets"


@contextlib.contextmanager
def activated(secrets: Secrets):
    """Make ``secrets`` current inside the block; an exception leaving it carries the set along
    (:func:`carried`)."""
    token = _ACTIVE.set(secrets)
    try:
        yield secrets
    except BaseException as exc:
        with contextlib.suppress(AttributeError):  # an exception type without a __dict__
            setattr(exc, _CARRIED, getattr(exc, _CARRIED, NONE) | secrets)
        raise
    finally:
        _ACTIVE.reset(token)


def current() -> Secrets:
    """The set made current by :func:`activated` (empty outside one)."""
    return _ACTIVE.get()


def carried(exc: BaseException) -> Secrets:
    """The secrets to redact ``exc``'s text with: those current where it was raised, and now."""
    return getattr(exc, _CARRIED, NONE) | current()


@overload
def cut(value: str, limit: int) -> str: ...
@overload
def cut(value: None, limit: int) -> None: ...


def cut(value: str | None, limit: int) -> str | None:
    """``current().cut(value, limit)``: how a transport shortens what a server said."""
    return current().cut(value, limit)


def cut_tail(value: str, limit_bytes: int) -> str:
    """``current().cut_tail(value, limit_bytes)``."""
    return current().cut_tail(value, limit_bytes)


def _forms(value: str) -> set[str]:
    if len(value) > _ENCODED_UP_TO:
        return {value}
    data = value.encode("utf-8", "surrogatepass")
    forms = {value, data.hex(), data.hex().upper()}
    if " " in value:
        forms.add(value.replace(" ", "+"))  # form encoding
    for shift in range(3):
        full = base64.b64encode(b"\0" * shift + data).decode("ascii")
        # The characters made only of the value's own bits: the same in any base64 text that holds
        # the value at this alignment. Aligned, the whole encoding (padded or not) counts as well.
        core = full[-(-8 * shift // 6): (8 * shift + 8 * len(data)) // 6]
        whole = {full, full.rstrip("=")} if shift == 0 else set()
        for spelled in whole | {core}:
            for text in (spelled, spelled.translate(_URLSAFE)):
                if len(text) >= RUN_LENGTH or spelled in whole:
                    forms.add(text)
    return {f for f in forms if len(f) >= MIN_SECRET_LENGTH}


_URLSAFE = str.maketrans("+/", "-_")


def _views(text: str) -> Iterator[tuple[str, list[int] | None]]:
    """``text`` as written, percent-decoded and JSON-unescaped, each with its position map."""
    yield text, None
    if "%" in text:
        yield _decoded(text, _PERCENT, _percent_chars)
    if "\\" in text:
        yield _decoded(text, _JSON_ESCAPE, _json_chars)


def _decoded(text: str, pattern: re.Pattern, decode) -> tuple[str, list[int]]:
    """The reading of ``text`` with ``pattern`` matches decoded, and its position map."""
    pieces: list[str] = []
    starts: list[int] = []
    pos = 0
    for match in pattern.finditer(text):
        pieces.append(text[pos:match.start()])
        starts.extend(range(pos, match.start()))
        for char, offset in decode(match):
            pieces.append(char)
            starts.append(match.start() + offset)
        pos = match.end()
    pieces.append(text[pos:])
    starts.extend(range(pos, len(text) + 1))
    return "".join(pieces), starts


def _percent_chars(match: re.Match) -> Iterator[tuple[str, int]]:
    data = bytes.fromhex(match.group(0).replace("%", ""))
    i = 0
    while i < len(data):
        size = 1 if data[i] < 0xC0 else 2 if data[i] < 0xE0 else 3 if data[i] < 0xF0 else 4
        try:
            char = data[i:i + size].decode("utf-8")
        except UnicodeDecodeError:
            char, size = "\ufffd", 1
        yield char, 3 * i
        i += size


def _json_chars(match: re.Match) -> Iterator[tuple[str, int]]:
    escape = match.group(0)
    if len(escape) == 12:  # a surrogate pair: one astral character
        high, low = int(escape[2:6], 16), int(escape[8:], 16)
        yield chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)), 0
        return
    yield (chr(int(escape[2:], 16)) if escape[1] == "u" else _JSON_NAMED[escape[1]]), 0


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for a, b in spans:
        out += [text[pos:a], MASK]
        pos = b
    out.append(text[pos:])
    return "".join(out)


def scrub_capture(capture, secrets: Secrets):
    """Redact, in place, every text of a ``Capture`` but its tool list; return it."""
    if not secrets:
        return capture
    capture.stderr_tail = secrets.text(capture.stderr_tail)
    capture.noise_sample = [secrets.text(s) for s in capture.noise_sample]
    capture.server_requests = [secrets.text(s) for s in capture.server_requests]
    for name in ("server_name", "server_version", "instructions"):
        setattr(capture, name, secrets.text(getattr(capture, name)))
    capture.capabilities = secrets.scrub(capture.capabilities)
    capture.extra_supported = secrets.scrub(capture.extra_supported)
    failure = capture.failure
    if failure is not None:
        failure.detail = secrets.text(failure.detail)
        failure.message = secrets.text(failure.message)
        failure.data = secrets.scrub(failure.data)
    return capture
