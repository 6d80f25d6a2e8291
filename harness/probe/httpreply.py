"""Reading one Streamable HTTP answer (JSON body or event stream, resumed when broken) up to its reply, every
body decoded and metered by ``chunks``.
"""

from __future__ import annotations

import asyncio
import codecs
import socket
import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from urllib.parse import urlsplit

import httpx2

from harness.probe import compatibility, redact, replies
from harness.probe.limits import MalformedReply, TransportLimitExceeded
from harness.probe.stdio import Incoming, looks_like_reply, parse_line
from harness.util import urls

__all__ = ["END", "ERROR_BODY_BYTES", "Incoming", "Reply", "chunks", "content_type", "looks_like_jsonrpc",
           "no_answer_reason", "read_body", "snippet"]

END = object()  # queued when an answer ended without the reply to its request
ERROR_BODY_BYTES = 64 * 1024  # what is read of an error answer (4xx/5xx) to quote or parse it
DEFAULT_RETRY_MS = 1000  # the Python SDK's wait before resuming when the server named no retry
MAX_RETRY_MS = 30_000  # a longer retry is shortened to this (the deadline bounds the rest)
MAX_RESUMPTIONS = 5
BOM_IN_BODY = compatibility.Finding("a JSON body began with a UTF-8 byte-order mark, dropped as framing (the "
                                    "Python SDK's parser refuses that body)", (compatibility.PYTHON,))
NOT_UTF8 = compatibility.Finding("an answer held bytes that are not UTF-8, read with U+FFFD in their place as the "
                                 "TypeScript SDK reads them (the Python SDK's strict decoding refuses them)",
                                 (compatibility.PYTHON,))
BOM_IN_STREAM = compatibility.Finding("an event stream began with a UTF-8 byte-order mark, dropped as WHATWG asks "
                                      "(the Python SDK reads it into the first field name and loses that event)",
                                      (compatibility.PYTHON,))


class Reply:
    """The reader of one answer: ``await read(body)`` queues its messages on ``transport.inbox`` and always
    closes the response."""

    def __init__(self, response: httpx2.Response, request_id: int | None, method: str, transport, on_endpoint=None):
        self.response, self.request_id, self.method, self.transport = response, request_id, method, transport
        self.limit = transport.limits.max_message_bytes
        self.on_endpoint = on_endpoint  # the 2024-11-05 HTTP+SSE stream: called with each endpoint event's data

    async def read(self, body: bytes | None) -> None:
        """Read the answer; never raises but for cancellation: what stops it is queued for ``receive``."""
        inbox = self.transport.inbox
        try:
            if await self._read(body):
                return
            if self.request_id is not None:
                self.transport.unanswered = self.transport.unanswered or self._describe("no JSON-RPC reply in it")
                inbox.put_nowait(END)
        except TransportLimitExceeded as exc:
            inbox.put_nowait(exc)
        except httpx2.SSEError:
            inbox.put_nowait(MalformedReply(f"a Server-Sent Event exceeded {self.limit} bytes"))
        except httpx2.HTTPError as exc:  # the connection broke, or the bytes are not HTTP
            if self.request_id is not None:
                reason = no_answer_reason(exc, str(self.response.url))
                self.transport.unanswered = self._describe(f"the answer broke off: {reason}")
                inbox.put_nowait(END)
        except Exception as exc:  # noqa: BLE001 - a bug here must surface in the conversation, not vanish
            inbox.put_nowait(exc)
        finally:
            await self.response.aclose()

    async def _read(self, body: bytes | None) -> bool:
        kind = content_type(self.response)
        if body is not None:
            return self._take(self._text(body))
        meter = self.transport.meter
        if kind == "text/event-stream":
            return await self._events()
        if kind in ("application/json", ""):
            body = await read_body(self.response, self.limit, meter=meter)
            return self._take(self._text(body))
        start = await read_body(self.response, ERROR_BODY_BYTES, truncate=True, meter=meter)
        self.transport.unanswered = self._describe(f"not JSON or an event stream: {snippet(start)!r}")
        return False

    async def _events(self) -> bool:
        last_id, retry, resumed = "", None, 0
        while True:
            try:
                decoded = _Decoded(self.response, self.transport.meter, self.transport.tolerate)
                async for event in httpx2.EventSource(decoded,  # type: ignore[arg-type]  # a duck-typed Response
                                                      max_event_size=self.limit):
                    last_id = event.id or last_id
                    retry = event.retry if event.retry is not None else retry
                    if event.event == "endpoint" and self.on_endpoint is not None:
                        self.on_endpoint(event.data)
                    elif event.data and self._take(event.data):
                        if resumed:
                            self.transport.capture.notes.append(
                                f"the reply to {self.method} arrived on a resumed stream (GET with Last-Event-ID, "
                                f"{resumed} reconnection(s)), as the transport's resumability allows")
                        return True
            except httpx2.HTTPError:
                if self.request_id is None or not last_id or resumed >= MAX_RESUMPTIONS:
                    raise
            if self.request_id is None or not last_id:
                return False
            if resumed >= MAX_RESUMPTIONS:
                return self._gave_up(f"after {resumed} resumptions with Last-Event-ID, the most this client makes")
            await self.response.aclose()
            await asyncio.sleep(min(retry if retry is not None else DEFAULT_RETRY_MS, MAX_RETRY_MS) / 1000)
            response = await self.transport.resume(last_id)
            if response is None:
                return self._gave_up(f"and a GET with Last-Event-ID did not resume it (after {resumed} resumption(s))")
            self.response, resumed = response, resumed + 1

    def _gave_up(self, why: str) -> bool:
        self.transport.unanswered = self._describe(f"no JSON-RPC reply in it {why}")
        return False

    def _text(self, body: bytes) -> str:
        if body.startswith(codecs.BOM_UTF8):
            self.transport.tolerate(BOM_IN_BODY)
        try:
            return body.decode("utf-8-sig")
        except UnicodeDecodeError:
            self.transport.tolerate(NOT_UTF8)
            return body.decode("utf-8-sig", errors="replace")

    def _take(self, text: str) -> bool:
        """Queue the JSON-RPC messages in ``text``, the rest as noise; True when the reply is among them."""
        if not text.strip():
            return False
        value = parse_line(text)
        items = value if isinstance(value, list) and value else [value]
        answered = False
        for item in items:
            if not (isinstance(item, dict) and item.get("jsonrpc") == "2.0"):
                if looks_like_reply(item):
                    self.transport.near_miss = text
                self.transport.note_noise(text)
                break
            self.transport.inbox.put_nowait(Incoming(raw=text, message=item))
            if self._answers(item):
                self.transport.adopt(self.method, item)
                answered = True
        return answered

    def _answers(self, message: dict) -> bool:
        return (self.request_id is not None and "method" not in message
                and replies.answers(message.get("id"), self.request_id) is not None)

    def _describe(self, what: str) -> str:
        kind = content_type(self.response) or "no content type"
        return f"HTTP {self.response.status_code} ({kind}), {what}"


def content_type(response: httpx2.Response) -> str:
    """The media type of ``response``, lower case, without parameters (``""`` when absent)."""
    return response.headers.get("Content-Type", "").split(";")[0].strip().lower()


class _Decoded:

    def __init__(self, response: httpx2.Response, meter: Callable[[int], None], tolerate: Callable[[object], None]):
        self.headers, self.request, self._response, self._meter = response.headers, response.request, response, meter
        self._tolerate = tolerate

    async def aiter_text(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        strict = codecs.getincrementaldecoder("utf-8")()  # only says whether a byte was replaced
        first = True
        async for chunk in chunks(self._response, self._meter):
            if first and chunk:
                first = False
                if chunk.startswith(codecs.BOM_UTF8):
                    self._tolerate(BOM_IN_STREAM)
            strict = _still_utf8(strict, chunk, self._tolerate)
            if text := decoder.decode(chunk):
                yield text
        _still_utf8(strict, b"", self._tolerate, final=True)
        if text := decoder.decode(b"", final=True):
            yield text


def _still_utf8(strict, chunk: bytes, tolerate: Callable[[object], None], final: bool = False):
    if strict is None:
        return None
    try:
        strict.decode(chunk, final=final)
        return strict
    except UnicodeDecodeError:
        tolerate(NOT_UTF8)
        return None


async def chunks(response: httpx2.Response, meter: Callable[[int], None] | None = None) -> AsyncIterator[bytes]:
    """The body as it arrives, decoded, metered, yielding to the event loop after each piece."""
    async for chunk in response.aiter_bytes():
        if meter is not None:
            meter(len(chunk))
        yield chunk
        await asyncio.sleep(0)


async def read_body(response: httpx2.Response, limit: int, truncate: bool = False,
                    meter: Callable[[int], None] | None = None) -> bytes:
    """The body up to ``limit`` bytes: past it, the first ``limit`` bytes when ``truncate``, else
    ``TransportLimitExceeded``."""
    data = bytearray()
    async for chunk in chunks(response, meter):
        data += chunk
        if len(data) > limit:
            if truncate:
                return bytes(data[:limit])
            raise MalformedReply(f"an HTTP reply exceeded {limit} bytes")
    return bytes(data)


def looks_like_jsonrpc(body: bytes) -> bool:
    """Whether an error answer's body carries JSON-RPC."""
    return b'"jsonrpc"' in body[:4096]


def snippet(body: bytes) -> str:
    """The first 200 bytes of a body as text, for a note."""
    return redact.cut(body[:200 + redact.CUT_MARGIN].decode("utf-8", errors="replace"), 200).strip()


def no_answer_reason(exc: BaseException, url: str) -> str:
    """Why a request got no HTTP answer, in at most 400 characters."""
    parts = urlsplit(url)
    host = parts.hostname or url
    where = f"{host}:{parts.port}" if parts.port else host
    for cause in _chain(exc):
        if isinstance(cause, socket.gaierror):
            return redact.cut(f"DNS: the host {host!r} does not resolve ({cause.strerror or cause})", 400)
        if isinstance(cause, ConnectionRefusedError):
            return redact.cut(f"connection refused by {where}: nothing accepts connections there", 400)
        if isinstance(cause, ssl.SSLError):
            return redact.cut(f"TLS with {where} failed: {cause}", 400)
    return redact.cut(urls.masked(f"no HTTP answer from {where}: {type(exc).__name__}: {exc}", url), 400)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__
