"""Streamable HTTP transport (MCP 2025-11-25, "Transports") and the remote launcher.

A ``url`` entry is asked an unauthenticated ``initialize`` first; the same conversation as stdio
(``session.converse``) then runs over HTTP POSTs, so an endpoint that answers is measured directly,
with no stdio bridge. Written on ``requests`` rather than the SDK's client for the reason given in
``stdio``: the capture must be the raw reply text parsed with ``JSON.parse`` semantics.

Outcomes: HTTP 401/403 → ``Failure(kind="http-auth")`` carrying the status and the
``WWW-Authenticate`` header (→ remote-auth-wall); any other non-MCP answer (connection refused,
HTTP error, a body that is not JSON-RPC) → ``Failure(kind="unreachable")`` with the reason.
Header values come from env ``MCP_HEADER_<NAME>`` (``-`` → ``_``, upper case); they are sent and
never recorded — only their names are.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque

import requests

from harness.core.jsparse import WireJSONError, parse
from harness.probe import redact
from harness.probe.limits import Limits, TransportLimitExceeded
from harness.probe.outcome import Capture, Failure
from harness.probe.session import converse, run_within
from harness.probe.stdio import Incoming
from harness.probe.target import Target

ACCEPT = "application/json, text/event-stream"


class HttpRefusal(Exception):
    """The endpoint answered HTTP without an MCP reply. ``failure`` holds the evidence."""

    def __init__(self, failure: Failure):
        super().__init__(failure.detail)
        self.failure = failure


def header_env_name(header: str) -> str:
    """The env var holding a header's value: ``Authorization`` → ``MCP_HEADER_AUTHORIZATION``."""
    return "MCP_HEADER_" + header.upper().replace("-", "_")


def header_values(target: Target) -> dict[str, str]:
    """Header name → value for the headers a target declares and the environment supplies."""
    return {h: os.environ[header_env_name(h)] for h in target.headers if header_env_name(h) in os.environ}


class HttpTransport:
    """``send``/``receive`` over Streamable HTTP POSTs, keeping ``Mcp-Session-Id`` once given."""

    def __init__(self, url: str, headers: dict[str, str], limits: Limits, capture: Capture, deadline: float):
        self.url, self.headers, self.limits, self.capture = url, headers, limits, capture
        self.deadline = deadline
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.inbox: deque[Incoming] = deque()
        self.http = requests.Session()

    async def send(self, message: dict) -> None:
        """POST one message; queue the JSON-RPC messages of the answer. Raises ``HttpRefusal``."""
        await asyncio.to_thread(self._post, message)

    async def receive(self) -> Incoming | None:
        """The next queued message, or ``None`` when the endpoint sent nothing more."""
        return self.inbox.popleft() if self.inbox else None

    def _post(self, message: dict) -> None:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, **self.headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        timeout = max(1.0, self.deadline - time.monotonic())
        try:
            response = self.http.post(self.url, json=message, headers=headers, timeout=timeout, stream=True)
            body = self._read_body(response)
        except requests.RequestException as exc:
            detail = redact.cut(f"no HTTP answer: {type(exc).__name__}: {exc}", 400)
            raise HttpRefusal(Failure("unreachable", self.capture.phase, detail))
        self._check_status(response, body)
        self.session_id = response.headers.get("Mcp-Session-Id", self.session_id)
        if "id" in message and "method" in message:
            self._queue(response, body)
        if message.get("method") == "initialize":
            self._remember_version()

    def _read_body(self, response: requests.Response) -> bytes:
        data = bytearray()
        for chunk in response.iter_content(1 << 16):
            data += chunk
            if len(data) > self.limits.max_message_bytes:
                response.close()
                raise TransportLimitExceeded(f"an HTTP reply exceeded {self.limits.max_message_bytes} bytes")
        return bytes(data)

    def _check_status(self, response: requests.Response, body: bytes) -> None:
        if response.status_code in (401, 403):
            challenge = response.headers.get("WWW-Authenticate")
            detail = f"HTTP {response.status_code} from {self.url}" + (
                f", WWW-Authenticate: {challenge}" if challenge else ", no WWW-Authenticate header")
            raise HttpRefusal(Failure("http-auth", self.capture.phase, detail, code=response.status_code, message=challenge))
        if response.status_code >= 400 and not _looks_like_jsonrpc(body):
            snippet = redact.cut(body[:200 + redact.CUT_MARGIN].decode("utf-8", errors="replace"), 200).strip()
            raise HttpRefusal(Failure("unreachable", self.capture.phase, f"HTTP {response.status_code}: {snippet!r}", code=response.status_code))

    def _queue(self, response: requests.Response, body: bytes) -> None:
        kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        texts = _sse_data(body) if kind == "text/event-stream" else [body.decode("utf-8", errors="replace")]
        for text in texts:
            try:
                message = parse(text)
            except WireJSONError:
                message = None
            if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                self.inbox.append(Incoming(raw=text, message=message))
            else:
                self.capture.noise_lines += 1
        if not self.inbox:
            snippet = redact.cut(body[:200 + redact.CUT_MARGIN].decode("utf-8", errors="replace"), 200).strip()
            raise HttpRefusal(Failure("unreachable", self.capture.phase,
                                      f"HTTP {response.status_code} ({kind or 'no content type'}) without a JSON-RPC reply: {snippet!r}"))

    def _remember_version(self) -> None:
        for incoming in self.inbox:
            result = incoming.message.get("result")
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.protocol_version = result["protocolVersion"]


def _sse_data(body: bytes) -> list[str]:
    """The ``data`` payloads of a ``text/event-stream`` body (multi-line data joined by newlines)."""
    events, current = [], []
    for line in body.decode("utf-8", errors="replace").splitlines():
        if not line:
            if current:
                events.append("\n".join(current))
            current = []
        elif line.startswith("data:"):
            current.append(line[5:].removeprefix(" "))
    if current:
        events.append("\n".join(current))
    return events


def _looks_like_jsonrpc(body: bytes) -> bool:
    return b'"jsonrpc"' in body[:4096]


async def probe_remote(target: Target, budget: float, limits: Limits, requested_version: str,
                       conversation=converse) -> Capture:
    """Measure a ``url`` target once within ``budget`` seconds; never raises for endpoint behaviour."""
    capture = Capture(requested_version=requested_version)
    started = time.monotonic()
    transport = HttpTransport(str(target.url), header_values(target), limits, capture, started + budget)
    try:
        await run_within(conversation, transport, capture, limits, budget)
    except HttpRefusal as refusal:
        capture.failure = refusal.failure
    finally:
        transport.http.close()
        capture.elapsed_seconds = round(time.monotonic() - started, 3)
    if capture.failure and capture.failure.kind == "exited":
        capture.failure = Failure("unreachable", capture.phase, "the endpoint answered without the expected JSON-RPC reply")
    return capture
