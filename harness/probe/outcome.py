"""What one launch of a server produced: the capture, or the structured evidence of why not.

These are facts, not verdicts: ``harness.probe.status`` turns them into one published status.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Failure:
    """Why a launch ended without a tool list.

    ``kind``: ``spawn`` (could not start), ``exited`` (stdout closed before the reply),
    ``timeout`` (the measurement deadline passed), ``jsonrpc-error`` (an error reply),
    ``bad-reply`` (a reply of the wrong shape), ``limit`` (a size, page or noise bound),
    ``pagination`` (a repeated cursor), ``malformed`` (a reply arrived that this client refuses:
    too large, nested too deep, not JSON where JSON-RPC was meant), ``unreachable`` (a ``url`` that gave no MCP answer: DNS,
    connection, TLS, or an HTTP answer that is not JSON-RPC, before ``initialize`` was answered),
    ``http-error`` (the same after ``initialize`` was answered: the server's own failure),
    ``http-auth`` (HTTP 401/403).
    ``phase``: ``spawn``, ``initialize``, ``notifications/initialized`` or ``tools/list page N``.
    ``code``/``message``/``data``: the JSON-RPC error object, when there was one.
    ``exit_code``: the process exit code, when it had exited.
    """

    kind: str
    phase: str
    detail: str
    code: int | None = None
    message: str | None = None
    data: object = None
    exit_code: int | None = None


@dataclass
class Capture:
    """Everything one launch saw. ``tools`` is the concatenated ``tools`` arrays (parsed with
    ``JSON.parse`` semantics) when every page arrived, else ``None`` and ``failure`` says why.
    ``elapsed_seconds`` is wall time from spawn to the last reply (seconds). ``notes``: what the
    conversation noticed and worked around (an id echoed as a string, a settled tool list, a server
    without a tools capability), each one sentence for the record's notes. ``zero_tools_reason``:
    the sentence that explains a capture of zero tools when it is not an empty ``tools`` array.
    ``transport``: ``stdio``, ``streamable-http`` or ``sse`` (the 2024-11-05 HTTP+SSE transport).
    ``initialized``: ``initialize`` was answered with a result. ``compatibility``: what strict
    clients would reject in how this server framed or refused things (``compatibility.Finding``);
    ``results``: the ``initialize`` and first-listing ``tools/list`` results, checked against the
    clients' types once the launch is over (``compatibility.findings``).
    """

    requested_version: str
    phase: str = "spawn"
    tools: list | None = None
    pages: int = 0
    negotiated_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    instructions: str | None = None
    capabilities: dict | None = None
    declared_tools_capability: bool | None = None
    noise_lines: int = 0
    noise_sample: list[str] = field(default_factory=list)
    stderr_tail: str = ""
    exit_code: int | None = None
    elapsed_seconds: float = 0.0
    failure: Failure | None = None
    server_requests: list[str] = field(default_factory=list)
    extra_supported: list | None = None
    side_lists: dict | None = None  # resources/prompts side figures (probe.side_lists), when asked
    notes: list[str] = field(default_factory=list)
    zero_tools_reason: str | None = None
    transport: str | None = None
    initialized: bool = False
    compatibility: list = field(default_factory=list)
    results: list = field(default_factory=list)  # (method, page, result) to check for compatibility

    @property
    def ok(self) -> bool:
        return self.failure is None and self.tools is not None
