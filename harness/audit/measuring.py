"""Measuring each distinct server once, concurrently, through the probe's public API.

Public: ``measure_all``, ``Outcome``, ``Cost``, ``cost``, ``redactor_for``. Rule: docs/AUDIT.md, "Measuring".
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.core.record import NUMBERED, Record, ToolRow
from harness.audit.model import SSE, Entry
from harness.core.counting import count_tools
from harness.probe import isolation as iso
from harness.probe import build_record as record
from harness.probe import sandbox
from harness.probe.measure import measure
from harness.probe.redact import Secrets, handed_values
from harness.probe.remote import header_env_name
from harness.probe.target import Target
from harness.util.untrusted import escape


@dataclass
class Outcome:
    """What one identity's measurement gave: status, redacted tools and counts, instructions, notes."""

    status: str
    tools: list | None = None
    tokens: int | None = None
    tool_count: int | None = None
    sha256: str | None = None
    per_tool: list[ToolRow] = field(default_factory=list)
    instructions: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def numbered(self) -> bool:
        return self.status in NUMBERED and self.tokens is not None


@dataclass(frozen=True)
class Cost:
    """An entry's figure after its client's tool filter; ``filtered`` counts the tools it removed."""

    tokens: int
    tool_count: int
    per_tool: list
    filtered: int = 0


def redactor_for(entries: list[Entry]) -> Secrets:
    """One secret set over all the ``entries`` hand a server, and their argv and URL as the file writes them."""
    values = [value for entry in entries for value in entry.secret_values]
    for entry in entries:  # gathered first: the set's tables are built once, over every value
        values += handed_values(env=entry.env_values, headers=entry.header_values, argv=entry.launch_argv,
                                url=entry.launch_url)
        values += handed_values(argv=entry.argv, url=entry.url)
    return Secrets(values)


async def measure_all(groups: dict[str, list[Entry]], redactor: Secrets, *, isolation: str = "host",
                      timeout: float = 60.0, concurrency: int = 4, dual: bool = True, progress=None,
                      started=None, ended=None, measurer=measure,
                      sandbox: str | None = "sandbox") -> dict[str, Outcome]:
    """``{identity: Outcome}``, ``concurrency`` at once; a bug in one raises ``RuntimeError`` after the rest finish."""
    gate = asyncio.Semaphore(concurrency)
    described = {mode: iso.describe(mode) for mode in {isolation, sandbox or isolation}}  # runtimes read once
    outcomes: dict[str, Outcome] = {}
    total = len(groups)
    write = progress or (lambda line: print(line, file=sys.stderr, flush=True))

    async def one(key: str, entries: list[Entry]) -> None:
        entry = entries[0]
        opted = any(e.sandboxed for e in entries)
        mode = (sandbox or isolation) if opted else isolation
        async with gate:
            if started is not None:
                started(escape(redactor.text(entry.name)))
            measurement = await measurer(target_for(key, entry, timeout), isolation=mode, dual=dual,
                                         pass_declared_values=True, environ=environ_for(entry))
            # The capture is redacted (before counting, the probe's rule) with this server's own values
            # only, so another entry's env value cannot change this server's number; ``redactor``
            # (every value of every config) cleans what is printed.
            rec = record.build(measurement, described[mode], secrets=redactor_for(entries))
        outcomes[key] = outcome_of(rec)
        if opted:
            outcomes[key].notes.insert(0, f"a project server measured because of --trust-project, under {mode} isolation"
                                       + ("" if sandbox else " (the sandbox cannot start on this machine)"))
        figure = f" — {rec['totalTokens']:,} tokens" if rec["totalTokens"] is not None else ""
        if ended is not None:
            ended(escape(redactor.text(entry.name)))
        write(escape(redactor.text(f"[{len(outcomes)}/{total}] {entry.name}: {rec['status']}{figure}")))

    # A bug raised by one measurement must not cancel the others mid-flight: cancelling a probe in the
    # middle of a remote request once left the audit waiting forever in asyncio.run's cleanup. Every
    # measurement runs to its own end (each is bounded by its timeout); then the first bug is raised
    # (``harness.cli.main`` reports it as exit 70), naming the server.
    keys = list(groups)
    results = await asyncio.gather(*(one(key, groups[key]) for key in keys), return_exceptions=True)
    for key, result in zip(keys, results):
        if isinstance(result, BaseException):
            raise RuntimeError(f"measuring {escape(redactor.text(groups[key][0].name))!r} failed: "
                               f"{type(result).__name__}: {redactor.text(str(result))}") from result
    return outcomes


def assignments(entry: Entry) -> dict[str, str | None]:
    """One measurement's environment changes: env values, ``MCP_HEADER_<NAME>`` values, names not in hand unset."""
    wanted: dict[str, str | None] = {name: entry.env_values.get(name) for name in entry.env_names}
    for name in entry.header_names:
        wanted[header_env_name(name)] = entry.header_values.get(name)
    return wanted


def environ_for(entry: Entry, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` with ``assignments(entry)`` applied: a name not in hand is removed, never a host value."""
    environ = dict(os.environ if base is None else base)
    for name, value in assignments(entry).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return environ


def target_for(key: str, entry: Entry, timeout: float) -> Target:
    """The probe's target for ``entry`` (launch face; names only)."""
    cwd = entry.cwd if entry.cwd and os.path.isdir(entry.cwd) else None
    if entry.launch_url:
        return Target(name=f"audit-{key}", url=entry.launch_url, headers=entry.header_names,
                      timeout_seconds=timeout, transport="sse" if entry.transport == SSE else None)
    return Target(name=f"audit-{key}", command=shlex.join(entry.launch_argv), env=entry.env_names,
                  timeout_seconds=timeout, cwd=cwd, host_dirs=_vouched(entry, cwd))


def _vouched(entry: Entry, cwd: str | None) -> tuple[str, ...]:
    """The host folder the sandbox shows read-only: an opted-in project's, never a home folder or its ancestor."""
    if not (entry.sandboxed and cwd):
        return ()

    folder = os.path.realpath(cwd)
    homes = sandbox.home_folders() | {os.path.realpath(os.path.expanduser("~"))}
    if any(folder == home or home.startswith(folder.rstrip("/") + "/") for home in homes):
        return ()
    # a config naming ~/.ssh, or ~/.aws kept elsewhere through a link
    if sandbox.secret_part(folder) or sandbox.secret_part(cwd) or sandbox.masked_by_sandbox(folder):
        return ()
    return (folder,)


def outcome_of(rec: Record) -> Outcome:
    """An ``Outcome`` from a validated measurement record."""
    numbered = rec["status"] in NUMBERED and rec["totalTokens"] is not None
    return Outcome(status=rec["status"], tools=rec["rawToolsCapture"] if numbered else None,
                   tokens=rec["totalTokens"], tool_count=rec["toolCount"], sha256=rec["canonicalSha256"],
                   per_tool=list(rec["tools"]), instructions=rec.get("serverInstructions"), notes=list(rec["notes"]))


def cost(entry: Entry, outcome: Outcome) -> Cost | None:
    """``entry``'s figure under its tool filter, or ``None`` when the server has no number."""
    if not outcome.numbered or outcome.tokens is None or outcome.tool_count is None:
        return None
    if entry.include_tools is None and not entry.exclude_tools:
        return Cost(outcome.tokens, outcome.tool_count, outcome.per_tool)
    tools = outcome.tools or []
    kept = [tool for tool in tools if _kept(tool, entry)]
    counts = count_tools(kept).to_json()
    return Cost(counts["totalTokens"], counts["toolCount"], counts["tools"], len(tools) - len(kept))


def _kept(tool: object, entry: Entry) -> bool:
    name = tool.get("name") if isinstance(tool, dict) else None
    if name in entry.exclude_tools:  # an exclusion wins over an inclusion (Gemini CLI's rule)
        return False
    return entry.include_tools is None or name in entry.include_tools
