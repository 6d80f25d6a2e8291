"""Streamable HTTP transport with the HTTP+SSE fallback, and the remote launcher ``probe_remote``.
docs/METHODOLOGY.md, "Talking MCP the way clients do".
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Mapping
from urllib.parse import urljoin

import httpx2

from harness.core.canonical import stringify
from harness.core.jsparse import WireJSONError, parse
from harness.probe import httpreply, redact
from harness.probe.server_env import header_env_name
from harness.probe.limits import Limits, TransportLimitExceeded
from harness.probe.replies import Noise
from harness.probe.outcome import Capture, Failure
from harness.probe.session import converse, run_within
from harness.probe.target import Target
from harness.util import urls

ACCEPT = "application/json, text/event-stream"
CLOSE_SECONDS = 5.0  # closing sockets after the deadline must not become a second wait
MAX_REDIRECTS = 20  # as many as the library (and so the SDK) follows
FALLBACK_STATUSES = (400, 404, 405)  # the statuses after which a client tries the 2024-11-05 transport
STREAMABLE, LEGACY_SSE = "streamable-http", "sse"


class HttpRefusal(Exception):
    """The endpoint gave no MCP answer. ``failure`` holds the evidence."""

    def __init__(self, failure: Failure):
        super().__init__(failure.detail)
        self.failure = failure


def header_values(target: Target, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Header name → value for the headers a target declares and ``environ`` supplies."""
    environ = os.environ if environ is None else environ
    return {h: environ[header_env_name(h)] for h in target.headers if header_env_name(h) in environ}


class HttpTransport:
    """``send``/``receive`` over HTTP POSTs, keeping ``Mcp-Session-Id``. Always ``await close()``: it cancels
    every reader and closes every connection."""

    def __init__(self, url: str, headers: dict[str, str], limits: Limits, capture: Capture, legacy: bool = False):
        self.url, self.headers, self.limits, self.capture = url, headers, limits, capture
        self.name = LEGACY_SSE if legacy else STREAMABLE
        self.endpoint: str | None = None  # the 2024-11-05 transport's POST address, once announced
        self._stream: asyncio.Task | None = None  # the 2024-11-05 transport's GET stream
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.noise = Noise(limits.max_noise_lines, what="non-JSON-RPC bodies or events")
        self.received = 0  # bytes of every answer of this launch, after content decoding
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.leniencies: list = []  # compatibility.Finding: framing tolerated, read by the conversation
        self.near_miss: str | None = None  # the last skipped message shaped like a reply, not JSON-RPC 2.0
        self.unanswered: str | None = None  # what the last answer without a reply looked like
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(None), follow_redirects=False)
        self._reader: asyncio.Task | None = None
        self._listener: asyncio.Task | None = None

    def note_noise(self, text: str) -> None:
        """Count ``text`` as noise."""
        self.noise.add(text)

    def tolerate(self, finding) -> None:
        """Record framing this client tolerated (a ``compatibility.Finding``), once."""
        if finding not in self.leniencies:
            self.leniencies.append(finding)

    def meter(self, size: int) -> None:
        """Count ``size`` more bytes; raises ``TransportLimitExceeded`` past ``limits.max_total_bytes``."""
        self.received += size
        if self.received > self.limits.max_total_bytes:
            raise TransportLimitExceeded(f"the server sent more than {self.limits.max_total_bytes} bytes over HTTP "
                                         "in this launch (after content decoding)")

    async def send(self, message: dict) -> str | None:
        """POST one message; for a refused notification, return how. Raises ``HttpRefusal``."""
        is_request = "method" in message and "id" in message
        if self.name == LEGACY_SSE and self.endpoint is None:
            await self._open_legacy(None)
        if is_request:
            await _finish(self._reader)  # a stream held open after its reply ends here
        data = json.dumps(message, separators=(",", ":")).encode("utf-8")
        response = await self._request("POST", data, self.endpoint)
        if not is_request and response.status_code >= 400 and response.status_code not in (401, 403):
            return await self._refusal(response)
        try:
            body = await self._check_status(response)
        except HttpRefusal as refusal:
            if message.get("method") != "initialize" or self.name == LEGACY_SSE or refusal.failure.code not in \
                    FALLBACK_STATUSES or refusal.failure.kind != "unreachable":
                raise
            await self._open_legacy(refusal)
            return await self.send(message)
        self.session_id = response.headers.get("Mcp-Session-Id", self.session_id)
        if not is_request or self.name == LEGACY_SSE:
            await response.aclose()  # 202 Accepted, or an answer to nothing: never waited on
            return None
        reply = httpreply.Reply(response, message["id"], message["method"], self)
        self._reader = asyncio.ensure_future(reply.read(body))
        return None

    async def _refusal(self, response: httpx2.Response) -> str:
        body = await httpreply.read_body(response, httpreply.ERROR_BODY_BYTES, truncate=True, meter=self.meter)
        await response.aclose()
        text = f"HTTP {response.status_code}"
        try:
            value = parse(body.decode("utf-8-sig", errors="replace"))
        except WireJSONError:
            value = None
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict):
            code = redact.cut(stringify(error.get("code")), 40)
            return text + f" with JSON-RPC error {code}: {redact.cut(str(error.get('message')), 120)!r}"
        return text + (f": {httpreply.snippet(body)!r}" if body.strip() else " with an empty body")

    async def _open_legacy(self, refusal: HttpRefusal | None) -> None:
        """Open the 2024-11-05 HTTP+SSE transport, or raise ``refusal``."""
        self.name = self.capture.transport = LEGACY_SSE
        announced = asyncio.Event()

        def on_endpoint(data: str) -> None:
            if self.endpoint is None:
                try:
                    self.endpoint = urljoin(self.url, data.strip())
                except ValueError:  # "http://[::1": checked below, and refused by name
                    self.endpoint = data.strip()
                announced.set()

        try:
            response = await self._request("GET", None)
        except HttpRefusal as exc:
            raise self._legacy_failed(refusal, exc.failure.detail) from None
        kind = httpreply.content_type(response)
        if response.status_code != 200 or kind != "text/event-stream":
            await response.aclose()
            raise self._legacy_failed(refusal, f"GET answered HTTP {response.status_code} ({kind or 'no content type'})")
        self._stream = asyncio.ensure_future(httpreply.Reply(response, None, "GET", self, on_endpoint).read(None))
        waiter = asyncio.ensure_future(announced.wait())
        await asyncio.wait({waiter, self._stream}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self.endpoint is None:
            stopped = self._stopped()
            raise self._legacy_failed(refusal, f"the GET stream was stopped before any endpoint event: {stopped}"
                                      if stopped else "the GET stream ended without an endpoint event")
        try:
            elsewhere = not _same_origin(httpx2.URL(self.url), httpx2.URL(self.endpoint))
        except (httpx2.InvalidURL, ValueError, TypeError):
            raise self._legacy_failed(refusal, f"the endpoint event named {redact.cut(self.endpoint, 200)!r}, "
                                               "which is not a URL") from None
        if elsewhere:
            raise self._legacy_failed(refusal, f"the endpoint event named another origin "
                                               f"({redact.cut(self.endpoint, 200)}), which no client follows")
        if refusal is not None:
            self.capture.notes.append(
                f"POST initialize was answered HTTP {refusal.failure.code}; as the transport specification's "
                "backwards compatibility asks, a GET opened the 2024-11-05 HTTP+SSE transport, used for the whole session")

    def _stopped(self) -> str:
        while not self.inbox.empty():
            item = self.inbox.get_nowait()
            if isinstance(item, TransportLimitExceeded):
                return str(item)
        return ""

    def _legacy_failed(self, refusal: HttpRefusal | None, why: str) -> HttpRefusal:
        if refusal is None:
            return HttpRefusal(Failure("unreachable", self.capture.phase,
                                       f"no 2024-11-05 HTTP+SSE transport at {self.url}: {why}"))
        failure = refusal.failure
        self.name = self.capture.transport = STREAMABLE
        return HttpRefusal(Failure(failure.kind, failure.phase, f"{failure.detail}; a GET for the 2024-11-05 "
                                   f"HTTP+SSE transport found none: {why}", code=failure.code))

    async def resume(self, last_event_id: str) -> httpx2.Response | None:
        """GET the stream again from ``last_event_id``; ``None`` when it cannot be resumed."""
        if not _header_safe(last_event_id):
            return None
        try:
            response = await self._request("GET", None, extra={"Last-Event-ID": last_event_id})
        except HttpRefusal:
            return None
        if response.status_code != 200 or httpreply.content_type(response) != "text/event-stream":
            await response.aclose()
            return None
        return response

    async def receive(self) -> httpreply.Incoming | None:
        """The next message of an answer; ``None`` when no more can come. Raises what a reader hit
        (``TransportLimitExceeded``)."""
        readers = (self._reader, self._listener, self._stream)
        if self.inbox.empty() and not any(t is not None and not t.done() for t in readers):
            return None
        item = await self.inbox.get()
        if item is httpreply.END:
            return None
        if isinstance(item, BaseException):
            raise item
        return item

    async def listen(self) -> None:
        """Open the GET stream for notifications; the conversation never waits for it."""
        if self.name == LEGACY_SSE:
            return

        async def run() -> None:
            try:
                response = await self._request("GET", None)
            except HttpRefusal:
                return
            if response.status_code != 200 or httpreply.content_type(response) != "text/event-stream":
                await response.aclose()
                return
            await httpreply.Reply(response, None, "GET", self).read(None)

        self._listener = asyncio.ensure_future(run())

    async def close(self) -> None:
        """Cancel every reader, close every connection. Safe to call twice."""
        readers = (self._reader, self._listener, self._stream)
        for task in readers:
            if task is not None and not task.done():
                task.cancel()
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await asyncio.gather(*(t for t in readers if t), return_exceptions=True)
                await self.client.aclose()
        except TimeoutError:
            pass

    def adopt(self, method: str, message: dict) -> None:
        """After ``initialize``, send the negotiated revision as ``MCP-Protocol-Version``."""
        result = message.get("result")
        if method == "initialize" and isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self.protocol_version = result["protocolVersion"]

    async def _request(self, method: str, body: bytes | None, url: str | None = None,
                       extra: dict[str, str] | None = None) -> httpx2.Response:
        headers = {"Accept": ACCEPT if body is not None else "text/event-stream", **self.headers, **(extra or {})}
        if body is not None:
            headers["Content-Type"] = "application/json"
        for name, value in (("Mcp-Session-Id", self.session_id), ("MCP-Protocol-Version", self.protocol_version)):
            if value:
                headers[name] = self._echoed(name, value)
        try:
            request = self.client.build_request(method, url or self.url, content=body, headers=headers)
            for _ in range(MAX_REDIRECTS + 1):
                response = await self.client.send(request, stream=True)
                if response.next_request is None:
                    return response
                await response.aclose()  # a redirect's own body is never read
                request = self._redirected(response.next_request)
        except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
            raise HttpRefusal(Failure("unreachable", self.capture.phase, httpreply.no_answer_reason(exc, self.url)))
        raise HttpRefusal(Failure("unreachable", self.capture.phase,
                                  f"more than {MAX_REDIRECTS} redirects from {urls.shown(self.url)}, the last to "
                                  f"{redact.cut(str(request.url), 200)}"))

    def _echoed(self, header: str, value: str) -> str:
        """``value`` as the ``header`` it is echoed in; ``HttpRefusal`` when it cannot be one."""
        if _header_safe(value):
            return value
        raise HttpRefusal(Failure("bad-reply", self.capture.phase,
                                  f"the server's {header} value {redact.cut(value, 80)!r} cannot be sent back as the "
                                  f"{header} header (not ASCII, or holding CR, LF or NUL)"))

    def _redirected(self, request: httpx2.Request) -> httpx2.Request:
        """The redirected request, without declared headers off the origin."""
        if not _same_origin(httpx2.URL(self.url), request.url):
            for name in (*self.headers, "Authorization"):
                request.headers.pop(name, None)
        return request

    async def _check_status(self, response: httpx2.Response) -> bytes | None:
        """Raise ``HttpRefusal`` for a non-MCP answer; a JSON-RPC error body, else ``None``."""
        status = response.status_code
        if status in (401, 403):
            await response.aclose()
            challenge = response.headers.get("WWW-Authenticate")
            detail = f"HTTP {status} from {urls.shown(self.url)}" + (
                f", WWW-Authenticate: {challenge}" if challenge else ", no WWW-Authenticate header")
            raise HttpRefusal(Failure("http-auth", self.capture.phase, detail, code=status, message=challenge))
        if status < 400:
            return None
        body = await httpreply.read_body(response, min(self.limits.max_message_bytes, httpreply.ERROR_BODY_BYTES),
                                         meter=self.meter)
        if not httpreply.looks_like_jsonrpc(body):
            raise HttpRefusal(Failure("unreachable", self.capture.phase,
                                      f"HTTP {status} from {urls.shown(self.url)}: {httpreply.snippet(body)!r}", code=status))
        return body


def _header_safe(value: str) -> bool:
    return value.isascii() and not any(c in value for c in "\r\n\0")


def _same_origin(endpoint: httpx2.URL, there: httpx2.URL) -> bool:
    here, other = endpoint.origin, there.origin
    return here == other or (here.host == other.host and (here.scheme, here.port, other.scheme, other.port)
                             == ("http", 80, "https", 443))


async def _finish(task: asyncio.Task | None) -> None:
    if task is not None and not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def probe_remote(target: Target, budget: float, limits: Limits, requested_version: str,
                       conversation=converse, environ: Mapping[str, str] | None = None) -> Capture:
    """Measure a ``url`` target once within ``budget`` seconds; never raises for endpoint behaviour."""
    capture = Capture(requested_version=requested_version)
    started = time.monotonic()
    legacy = target.transport == LEGACY_SSE
    transport = HttpTransport(str(target.url), header_values(target, environ), limits, capture, legacy=legacy)
    try:
        await run_within(conversation, transport, capture, limits, budget)
    except HttpRefusal as refusal:
        capture.failure = refusal.failure
    finally:
        await transport.close()
        capture.noise_lines, capture.noise_sample = transport.noise.count, transport.noise.sample
        capture.elapsed_seconds = round(time.monotonic() - started, 3)
    capture.failure = _after_initialize(capture.failure, capture, transport) if capture.failure else None
    return capture


def _after_initialize(failure: Failure, capture: Capture, transport: HttpTransport) -> Failure:
    """The failure as published: ``unreachable`` only before ``initialize`` was answered."""
    what = transport.unanswered or "an empty answer"
    if failure.kind == "exited" and not capture.initialized:
        return Failure("unreachable", capture.phase, f"the endpoint answered without a JSON-RPC reply to the request: {what}")
    if failure.kind == "exited" and transport.unanswered:
        return Failure("malformed", capture.phase, f"the endpoint answered without a JSON-RPC reply to the request: {what}")
    if failure.kind == "unreachable" and capture.initialized:
        return Failure("http-error", failure.phase, f"{failure.detail} (after initialize was answered)", code=failure.code)
    return failure
