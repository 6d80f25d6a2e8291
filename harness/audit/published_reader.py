"""Reading a published file (capture index, tool shape) from this checkout or the repository's raw URL, bounded.

Public: ``lookup``, ``Lookup``, ``Unavailable``, ``shown``, ``default_source``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from harness.db.failure_reason import decisive
from harness.probe.server_env import credential_like, url_secrets
from harness.probe.redact import Secrets
from harness.util import bounded, schemas, urls

PUBLISHED_RAW = "https://raw.githubusercontent.com/mcp-context-cost/mcp-context-cost/main/"
CHECKOUT = Path(__file__).resolve().parents[2]  # the repository this harness runs from
MAX_BYTES = 64 * 1024 * 1024
TIMEOUT = (10.0, 60.0)
DEADLINE = 180.0


class Unavailable(Exception):
    """``what`` could not be read from ``source``; ``str()`` is the one-line problem."""

    def __init__(self, what: str, source: str, reason: str):
        self.what, self.source, self.reason = what, shown(source), _secrets(source).text(reason)
        super().__init__(f"{what} could not be read from {self.source}: {self.reason}")


@dataclass(frozen=True)
class Lookup:
    """A published file asked for: where it was read from, the document, or the ``problem``."""

    source: str
    document: dict | None = None
    problem: str | None = None


def lookup(source: str, reader: Callable[[str], dict]) -> Lookup:
    """``reader(source)`` as a :class:`Lookup`: an :class:`Unavailable` becomes its ``problem``
    (never raised, never dropped)."""
    try:
        return Lookup(shown(source), reader(source))
    except Unavailable as exc:
        return Lookup(shown(source), None, str(exc))


def shown(source: str | Path) -> str:
    """``source`` as it may be printed: a URL with its credentials masked, a path unchanged."""
    return urls.shown(str(source)) if is_url(str(source)) else str(source)


def _secrets(source: str):
    """The credentials a URL may carry: userinfo, secret-named query values, any value that reads as one."""

    if not is_url(source):
        return Secrets(())
    try:
        query = parse_qsl(urlsplit(source).query, keep_blank_values=False)
    except ValueError:
        query = []
    return Secrets([*urls.credentials(source), *url_secrets(source), *(value for _, value in query if credential_like(value))])


def is_url(source: str) -> bool:
    return str(source).startswith(("http://", "https://"))


def default_source(relative: str, root: Path | None = None) -> str:
    """``root/relative`` when that file exists (``root`` defaults to this checkout), else the
    published raw URL of ``relative``."""
    local = Path(root or CHECKOUT) / relative
    return str(local) if local.is_file() else PUBLISHED_RAW + relative


def read(source: str | Path, what: str, schema: str) -> dict:
    """The JSON document at ``source``, schema-checked. Raises :class:`Unavailable` for anything else."""
    source = str(source)
    data = _fetch(source, what) if is_url(source) else _local(source, what)
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise Unavailable(what, source, f"not JSON: {_short(exc)}") from None
    try:
        schemas.check(schema, document, where=what)
    except schemas.SchemaViolation as exc:
        raise Unavailable(what, source, f"not a valid {schema} document: {_short(exc)}") from None
    return document


def _local(path: str, what: str) -> bytes:
    try:
        return bounded.read_regular(path, MAX_BYTES)
    except bounded.TooLarge:
        raise Unavailable(what, path, f"larger than {MAX_BYTES:,} bytes") from None
    except OSError as exc:
        raise Unavailable(what, path, exc.strerror or str(exc) or type(exc).__name__) from None


def _fetch(url: str, what: str) -> bytes:
    import requests  # loaded only when a source is a URL

    started = time.monotonic()
    try:
        # The overall deadline covers the headers too: a server dripping them resets every per-read
        # timeout, and the check between body chunks below never runs.
        with bounded.deadline(DEADLINE), requests.get(url, timeout=TIMEOUT, stream=True) as response:
            if response.status_code != 200:
                raise Unavailable(what, url, f"HTTP {response.status_code} {response.reason or ''}".rstrip())
            data = bytearray()
            # read1: whatever has arrived (a fixed-size read would wait for the whole chunk, past
            # the deadline, on a server that drips).
            while chunk := response.raw.read1(1 << 16, decode_content=True):
                data += chunk
                if len(data) > MAX_BYTES:
                    raise Unavailable(what, url, f"larger than {MAX_BYTES:,} bytes")
                if time.monotonic() - started > DEADLINE:
                    raise Unavailable(what, url, f"still downloading after {DEADLINE:g} s")
            return bytes(data)
    except bounded.DeadlineExceeded:
        raise Unavailable(what, url, f"still downloading after {DEADLINE:g} s") from None
    except requests.RequestException as exc:

        raise Unavailable(what, url, _short(decisive(str(exc)))) from None


def _short(exc: object, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
