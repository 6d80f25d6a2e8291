"""The MCP conversation this harness holds with a server (protocol revision 2025-11-25, lifecycle
and ``tools/list`` pagination), independent of the transport.

1. ``initialize`` with ``capabilities: {}`` — the harness declares nothing it cannot do
   (spec, "What the client declares").
2. ``notifications/initialized``.
3. ``tools/list`` following ``nextCursor`` until it is absent, with a page cap and a guard against a
   cursor the server already sent.

While waiting for a reply the client answers ``ping`` with an empty result and any other server
request with JSON-RPC error -32601, since it declared no capability that would make such a request
legitimate. Notifications are ignored.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from harness import __version__
from harness.probe import redact
from harness.probe.limits import Limits, TransportLimitExceeded
from harness.probe.outcome import Capture, Failure

REQUESTED_PROTOCOL_VERSION = "2025-11-25"
MODERN_PROTOCOL_VERSION = "2026-07-28"
HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_INFO = {"name": "mcp-context-cost", "version": __version__}
# One wording whichever side noticed first (a failed write to stdin or EOF on stdout), so the
# same behaviour always yields the same note.
EXITED = "the server exited before replying"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


class Transport(Protocol):
    async def send(self, message: dict) -> None: ...
    async def receive(self): ...


class _Stop(Exception):
    def __init__(self, failure: Failure):
        self.failure = failure


async def converse(transport: Transport, capture: Capture, limits: Limits, *,
                   capabilities: dict | None = None, after_tools=None) -> None:
    """Run initialize → initialized → tools/list pages, filling ``capture`` as it goes.

    ``capture.phase`` always names the step in progress, so a caller that cancels this coroutine
    (the measurement deadline) knows where the run ended. On failure ``capture.failure`` is set;
    nothing is raised for anything the server does. Transport limit errors propagate as
    ``Failure(kind="limit")``.

    Hooks for the side readings beside the headline (issue #14), both off by default:
    ``capabilities`` replaces the empty client capabilities at ``initialize`` (the capability
    probe; the headline always declares none); ``after_tools(transport, capture, limits)`` runs
    once the tool list is complete (resources/prompts side figures) and must not touch
    ``capture.tools`` or ``capture.failure``.
    """
    async def steps() -> None:
        await _initialize(transport, capture, capabilities)
        await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await _list_tools(transport, capture, limits)
        if after_tools is not None:
            await after_tools(transport, capture, limits)

    await _guarded(transport, capture, steps())


async def run_within(conversation, transport: Transport, capture: Capture, limits: Limits, budget: float) -> None:
    """Run ``conversation`` (``converse`` or ``discover``) under one deadline of ``budget`` seconds
    for the whole exchange; a passed deadline or a crossed bound becomes ``capture.failure``."""
    try:
        async with asyncio.timeout(budget):
            await conversation(transport, capture, limits)
    except TimeoutError:
        capture.failure = Failure("timeout", capture.phase, f"no answer within {budget:g} s")
    except TransportLimitExceeded as exc:
        capture.failure = Failure("limit", capture.phase, str(exc))


async def _guarded(transport: Transport, capture: Capture, steps) -> None:
    """Run a conversation's ``steps`` coroutine; turn a stop or a vanished server into
    ``capture.failure``, or mark the capture ``done``."""
    try:
        await steps
        capture.phase = "done"
    except _Stop as stop:
        capture.failure = stop.failure
    except ConnectionError:
        await _drain(transport)
        capture.failure = Failure("exited", capture.phase, EXITED)


async def _drain(transport: Transport, seconds: float = 2.0) -> None:
    """After a write found the server gone, read what it printed before exiting, so its non-JSON
    lines are counted the same whichever side noticed the exit first."""
    try:
        async with asyncio.timeout(seconds):
            while await transport.receive() is not None:
                pass
    except (TimeoutError, Exception):  # noqa: BLE001 - a limit or parse error here changes nothing
        pass


async def discover(transport: Transport, capture: Capture, limits: Limits) -> None:
    """The 2026-07-28 revision's flow: ``server/discover`` then ``tools/list`` pages, each request
    carrying the revision, client info and (empty) capabilities in ``params._meta``.

    Used only after ``initialize`` was refused, to publish a separate, labelled figure; fills
    ``capture`` like ``converse`` (``negotiated_version`` = the revision listed under).
    """
    meta = {META_VERSION: capture.requested_version, META_CLIENT_INFO: CLIENT_INFO, META_CLIENT_CAPABILITIES: {}}

    async def steps() -> None:
        capture.phase = "server/discover"
        await transport.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}})
        _adopt_discover(await _result(transport, capture, 1), capture, meta)
        await _list_tools(transport, capture, limits, meta)

    await _guarded(transport, capture, steps())


def _adopt_discover(result: dict, capture: Capture, meta: dict) -> None:
    """Fill ``capture`` from a ``server/discover`` result and pick the revision to list under."""
    supported = result.get("supportedVersions")
    capture.capabilities = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else None
    capture.declared_tools_capability = bool(capture.capabilities) and "tools" in capture.capabilities
    capture.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
    info = (result.get("_meta") or {}).get(META_SERVER_INFO) if isinstance(result.get("_meta"), dict) else None
    if isinstance(info, dict):
        capture.server_name, capture.server_version = _text(info.get("name")), _text(info.get("version"))
    if isinstance(supported, list) and supported and capture.requested_version not in supported:
        meta[META_VERSION] = capture.requested_version = str(supported[-1])
    capture.negotiated_version = meta[META_VERSION]
    capture.extra_supported = supported if isinstance(supported, list) else None


def initialize_request(version: str, capabilities: dict | None = None) -> dict:
    """The ``initialize`` request this harness sends (id 1, no client capabilities unless the
    capability probe passes ``capabilities``)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": dict(capabilities or {}), "clientInfo": CLIENT_INFO},
    }


async def _initialize(transport: Transport, capture: Capture, capabilities: dict | None = None) -> None:
    capture.phase = "initialize"
    await transport.send(initialize_request(capture.requested_version, capabilities))
    result = await _result(transport, capture, 1)
    info = result.get("serverInfo")
    if isinstance(info, dict):
        capture.server_name = _text(info.get("name"))
        capture.server_version = _text(info.get("version"))
    version = result.get("protocolVersion")
    capture.negotiated_version = version if isinstance(version, str) else None
    instructions = result.get("instructions")
    capture.instructions = instructions if isinstance(instructions, str) else None
    caps = result.get("capabilities")
    capture.capabilities = caps if isinstance(caps, dict) else None
    capture.declared_tools_capability = isinstance(caps, dict) and "tools" in caps


async def _list_tools(transport: Transport, capture: Capture, limits: Limits, meta: dict | None = None) -> None:
    tools: list = []
    seen: set[str] = set()
    cursor = None
    while True:
        page = capture.pages + 1
        capture.phase = f"tools/list page {page}"
        if page > limits.max_pages:
            raise _Stop(Failure("limit", capture.phase, f"more than {limits.max_pages} tools/list pages"))
        params = {"cursor": cursor} if cursor is not None else {}
        if meta:
            params["_meta"] = meta
        await transport.send({"jsonrpc": "2.0", "id": page + 1, "method": "tools/list", "params": params})
        result = await _result(transport, capture, page + 1)
        page_tools = result.get("tools")
        if not isinstance(page_tools, list):
            shape = "missing" if "tools" not in result else f"{_js_type(page_tools)}, not an array"
            raise _Stop(Failure("bad-reply", capture.phase, f"tools/list result.tools is {shape}"))
        tools.extend(page_tools)
        capture.pages = page
        cursor = result.get("nextCursor")
        if cursor is None or cursor == "":
            break
        if not isinstance(cursor, str):
            raise _Stop(Failure("bad-reply", capture.phase, f"nextCursor is {_js_type(cursor)}, not a string"))
        if cursor in seen:
            raise _Stop(Failure("pagination", capture.phase, f"nextCursor {redact.cut(cursor, 80)!r} repeated"))
        seen.add(cursor)
    capture.tools = tools


async def _result(transport: Transport, capture: Capture, request_id: int) -> dict:
    """Wait for the reply to ``request_id``; answer server requests meanwhile; return its result."""
    while True:
        incoming = await transport.receive()
        if incoming is None:
            raise _Stop(Failure("exited", capture.phase, EXITED))
        message = incoming.message
        if "method" in message:
            await _answer_server_message(transport, capture, message)
            continue
        if message.get("id") != request_id:
            continue
        if "error" in message:
            raise _Stop(_error_failure(capture.phase, message["error"]))
        result = message.get("result")
        if not isinstance(result, dict):
            raise _Stop(Failure("bad-reply", capture.phase, f"result is {_js_type(result)}, not an object"))
        return result


async def _answer_server_message(transport: Transport, capture: Capture, message: dict) -> None:
    if "id" not in message:
        return  # a notification: nothing to answer
    method = message.get("method")
    capture.server_requests.append(redact.cut(str(method), 80))
    if method == "ping":
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    else:
        error = {"code": -32601, "message": f"Method not found: this client declared no capabilities ({method})"}
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
    await transport.send(reply)


def _error_failure(phase: str, error: object) -> Failure:
    if not isinstance(error, dict):
        return Failure("bad-reply", phase, f"error is {_js_type(error)}, not an object")
    code = error.get("code")
    code = int(code) if isinstance(code, float) and code.is_integer() else None
    message = _text(error.get("message"))
    detail = f"JSON-RPC error {code}: {message}"
    return Failure("jsonrpc-error", phase, detail, code=code, message=message, data=error.get("data"))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _js_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
