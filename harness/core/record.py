"""The measurement record's type: ``results/<server>/measurement.json`` as every layer sees it.

``Record`` mirrors ``schemas/measurement.schema.json`` (the schema is the authority and validates
every record written or read); ``tests/core/test_record_type.py`` keeps the two in step.
"""

# No `from __future__ import annotations`: TypedDict reads NotRequired from evaluated annotations.
from typing import Any, Literal, NotRequired, TypedDict, get_args

Status = Literal["measured", "dynamic", "auth-required", "startup-failure", "timeout", "not-applicable",
                 "protocol-mismatch", "remote-auth-wall", "unreachable", "malformed-reply", "uncountable",
                 "too-large", "not-measured-here", "not-yet-run"]
STATUSES: tuple[str, ...] = get_args(Status)  # in this order on every page that lists statuses
NUMBERED = ("measured", "dynamic")  # the statuses that carry a number
IsolationMode = Literal["host", "sandbox", "docker"]
ISOLATION_MODES: tuple[str, ...] = get_args(IsolationMode)  # where a server can be run


class ToolRow(TypedDict):
    """One tool's diagnostic counts (never summed: the total counts the whole canonical string)."""

    name: str
    tokens: int
    descriptionTokens: int
    inputSchemaTokens: int
    note: NotRequired[str]


class Attempt(TypedDict):
    """One launch (or the install run before any launch) and how it ended."""

    phase: str
    outcome: str
    elapsedSeconds: float
    exitCode: NotRequired[int | None]
    canonicalSha256: NotRequired[str | None]
    role: NotRequired[Literal["first", "retry", "confirmation", "install"]]
    budgetMs: NotRequired[int]
    status: NotRequired[str | None]
    evidence: NotRequired[str | None]


class Isolation(TypedDict):
    """Where the server ran: the isolation mode and the machine's runtimes."""

    mode: IsolationMode
    arch: str
    os: NotRequired[str]
    image: NotRequired[str | None]
    network: NotRequired[str | None]
    runtimes: NotRequired[dict[str, str | None]]
    note: NotRequired[str | None]


class ResolvedPackage(TypedDict):
    """The npx/uvx package resolved once and launched from its install."""

    launcher: Literal["npx", "uvx"]
    name: str
    version: str


class Record(TypedDict):
    """A measurement record; keys absent from a record are ``NotRequired``."""

    methodologyVersion: str
    provider: str
    encoding: str
    server: str
    status: Status
    totalTokens: int | None
    toolCount: int | None
    canonicalSha256: str | None
    canonicalLength: int | None
    tools: list[ToolRow]
    rawToolsCapture: list[Any] | None
    measuredAt: str
    serverName: str | None
    serverVersion: str | None
    serverInstructions: str | None
    launchCommand: str
    envVarNames: list[str]
    requestedProtocolVersion: str
    isolation: Isolation
    timeoutMs: int
    phase: str
    attempts: list[Attempt]
    notes: list[str]
    harnessVersion: str
    declaredToolsCapability: NotRequired[bool | None]
    resolvedPackage: NotRequired[ResolvedPackage]
    headerNames: NotRequired[list[str]]
    negotiatedProtocolVersion: NotRequired[str]
    shownHostPaths: NotRequired[list[str]]
    deadlineMs: NotRequired[int]
    transport: NotRequired[Literal["stdio", "streamable-http", "sse"]]
    compatibility: NotRequired[dict[str, Any]]
    stderrTail: NotRequired[str | None]
    discover: NotRequired[dict[str, Any]]
    sideLists: NotRequired[dict[str, Any]]
    confirmed: NotRequired[bool]
    environmentEvidence: NotRequired[str]
    environmentCause: NotRequired[Literal["dns", "runtime-version", "download-blocked", "registry", "cache-locked",
                                            "disk-full"]]
    harnessError: NotRequired[str]
