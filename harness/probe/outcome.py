"""What one launch produced: ``Capture``, and ``Failure`` when it listed no tools."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Failure:
    """Why a launch ended without a tool list; ``code``/``message``/``data`` are the JSON-RPC error's."""

    # spawn, exited (stdout closed before the reply), timeout, jsonrpc-error, bad-reply, limit,
    # pagination (a repeated cursor), malformed (a reply this client refuses), unreachable (no MCP
    # answer before initialize), http-error (the same after it), http-auth (401/403), harness (a bug of
    # ours ended it: probe/harness_bug.py). probe/status.py::classify turns a kind into a status.
    kind: str
    phase: str  # spawn, initialize, notifications/initialized or "tools/list page N"
    detail: str
    code: int | None = None
    message: str | None = None
    data: object = None
    exit_code: int | None = None


@dataclass
class Capture:
    """Everything one launch saw: ``tools`` when every page arrived, else ``failure``."""

    requested_version: str
    phase: str = "spawn"
    tools: list | None = None  # the pages' tools arrays, concatenated, parsed as JSON.parse would
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
    elapsed_seconds: float = 0.0  # spawn to the last reply
    failure: Failure | None = None
    server_requests: list[str] = field(default_factory=list)
    extra_supported: list | None = None
    side_lists: dict | None = None  # resources/prompts side figures (probe.side_lists), when asked
    notes: list[str] = field(default_factory=list)
    zero_tools_reason: str | None = None  # why zero tools, when not an empty tools array
    transport: str | None = None  # stdio, streamable-http or sse
    initialized: bool = False  # initialize was answered with a result
    compatibility: list = field(default_factory=list)  # compatibility.Finding items
    results: list = field(default_factory=list)  # (method, page, result) to check for compatibility

    @property
    def ok(self) -> bool:
        return self.failure is None and self.tools is not None
