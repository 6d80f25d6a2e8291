"""One measurement of one target: attempts with retries, then an independent second launch. docs/METHODOLOGY.md,
"Retries and the deadline", "Two launches: measured or dynamic".
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.core.canonical import stringify
from harness.probe import npx_cache
from harness.probe import install as installing
from harness.probe import launch, machine_fault, node_engine, redact, sandbox, side_lists, teardown, warmup
from harness.probe import workdir
from harness.probe import status as st
from harness.probe.limits import Limits
from harness.probe.limits import from_env as limits_from_env
from harness.probe.outcome import Capture
from harness.probe.session import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSION, REQUESTED_PROTOCOL_VERSION, discover
from harness.probe.target import Target

RETRY_BUDGET_FACTOR = 2.0
# "after": the confirmation waits for the first launch to end — for servers
# (test fixtures) whose behaviour is scripted by the order their launches start in.
CONFIRMATION_VARIABLE = "MCP_CONTEXT_COST_CONFIRMATION"


FIRST, RETRY, CONFIRMATION = "first", "retry", "confirmation"


@dataclass(frozen=True)
class AttemptInfo:
    """One launch as the notes describe it: role, budget, and a failure's own status and evidence."""

    role: str
    budget_seconds: float
    status: str | None = None
    evidence: str | None = None


@dataclass
class Measurement:
    """The outcome: ``status``, the published ``capture``, every attempt with its ``attempt_info``, and
    ``notes``; ``confirmed`` is ``None`` for a failure."""

    target: Target
    status: str
    capture: Capture
    attempts: list[Capture]
    notes: list[str] = field(default_factory=list)
    deadline_seconds: float = 0.0
    widest_budget_seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    discover_capture: Capture | None = None
    secrets: redact.Secrets = redact.NONE
    attempt_info: list[AttemptInfo] = field(default_factory=list)
    budget_seconds: float = 0.0
    confirmed: bool | None = None
    teardowns: list = field(default_factory=list)

    async def ended(self) -> None:
        """Wait until every process this measurement started has ended (before building the record)."""
        await teardown.ended(self.teardowns)


async def measure(
    target: Target,
    *,
    limits: Limits | None = None,
    requested_version: str = REQUESTED_PROTOCOL_VERSION,
    dual: bool = True,
    pass_declared_values: bool = True,
    isolation: str = "host",
    launcher=None,
    environ: Mapping[str, str] | None = None,
    launch_slots=None,
    installed=None,
) -> Measurement:
    """Measure ``target``; never raises for server behaviour. ``environ`` feeds the server's environment only;
    ``launch_slots`` is entered around each launch; ``installed`` is an install already made."""
    limits = limits or limits_from_env()
    secrets = redact.Secrets.for_target(target, environ)
    launcher = _redacting(launcher or side_lists.with_side_lists(
        _default_launcher(target, pass_declared_values, isolation, environ)), secrets)
    deferred: list = []
    with redact.activated(secrets):
        warmup.begin()
        if installed is None:
            with warmup.heavy_after_spawn():
                installed = await installing.install(target, isolation, pass_declared_values=pass_declared_values,
                                                     environ=environ, requested_version=requested_version)
        target = installed.target
        if installed.failures:
            result = _install_failed(target, installed, secrets)
        else:
            await warmup.tokenizer_tried()
            async with teardown.scope() as deferred:
                result = await _measured(_Launches(target, limits, requested_version, launcher,
                                                   launch_slots or contextlib.nullcontext()), dual, isolation)
            _weigh_findings(result, installed.findings)
    result.secrets = secrets
    result.teardowns = deferred
    return result


INSTALL = "install"


def _install_failed(target: Target, installed, secrets: redact.Secrets) -> Measurement:
    bound = installing.bound_seconds()
    attempts = [redact.scrub_capture(c, secrets) for c in installed.failures]
    verdicts = [st.classify(target, c) for c in attempts]
    if installed.locked:  # a process of this machine kept the cache: nothing was tried of the server
        verdicts[-1] = st.environment_verdict(verdicts[-1], attempts[-1].failure.detail, machine_fault.CACHE_LOCKED)
    info = [AttemptInfo(INSTALL, bound, v.status, v.evidence) for v in verdicts]
    verdict = verdicts[-1]
    extra = {"environmentEvidence": verdict.environment, "environmentCause": verdict.cause} \
        if verdict.environment else {}
    return Measurement(target, verdict.status, attempts[-1], attempts, [verdict.evidence, *installed.notes],
                       bound, bound, extra=extra, attempt_info=info, budget_seconds=bound)


def _weigh_findings(result: Measurement, findings: tuple[str, ...]) -> None:
    """Turn a failure after an install's older-Node warning into ``not-measured-here``, or note the warning
    (whatever the status: a server that listed its tools on this Node is measured, with the warning beside it)."""
    if not findings:
        return
    finding = findings[0]
    if impossible := node_engine.impossible_engine(finding):  # the package's mistake: no Node would run it
        result.notes.append(f"the install warned: {finding}; {impossible}")
        return
    if result.status not in (st.STARTUP_FAILURE, st.TIMEOUT):
        result.notes.append(f"the install warned: {finding}")
        return
    package = result.target.resolved.package if result.target.resolved is not None else None
    silent = st.last_line(result.capture.stderr_tail) is None and st.last_line(st.stdout_said(result.capture)) is None
    if silent or (package and (finding.startswith(f"{package}@") or f" {package}@" in finding)):
        verdict = st.environment_verdict(st.Verdict(result.status, result.notes[0]), finding, machine_fault.cause(finding))
        result.status, result.notes[0] = verdict.status, verdict.evidence
        result.extra |= {"environmentEvidence": verdict.environment, "environmentCause": verdict.cause}
    else:
        result.notes.append(f"the install warned: {finding}")


def _redacting(launcher, secrets: redact.Secrets):
    async def redacted(*args, **kwargs) -> Capture:
        return redact.scrub_capture(await launcher(*args, **kwargs), secrets)

    return redacted


class _Launches:
    """One target's launches: ``run`` enters ``slots`` around each and bounds its budget by one overall deadline,
    set when the first launch gets its slot and kept for both orders."""

    def __init__(self, target: Target, limits: Limits, requested_version: str, launcher, slots):
        self.target, self.limits, self.requested_version = target, limits, requested_version
        self.launcher, self.slots = launcher, slots
        self.base = float(target.timeout_seconds)
        self.deadline = self.base * (1 + RETRY_BUDGET_FACTOR + 1) + 30.0
        self.ends: list[float] = []

    async def run(self, budget: float, early: _Early | None = None, **kwargs) -> Capture:
        async with self.slots:
            if early is not None:
                early.launched = True
            if not self.ends:
                self.ends.append(time.monotonic() + self.deadline)
            remaining = max(1.0, self.ends[0] - time.monotonic())
            return await self.launcher(self.target, min(budget, remaining), self.limits,
                                       kwargs.pop("version", self.requested_version), **kwargs)


@dataclass(frozen=True)
class _Disagreed:
    """The two launches started together both listed tools, and not the same ones."""


async def _measured(launches: _Launches, dual: bool, isolation: str) -> Measurement:
    """The measurement: the confirmation started beside the first launch when ``_beside``, and made again one
    launch after the other when the two launches started together disagree."""
    if dual and _beside():
        together = await _measured_together(launches, isolation)
        if not isinstance(together, _Disagreed):
            return together
        # either may have seen the other (its directory, a lock, a port): both are dropped, not recorded
        await teardown.drain()
    return await _measured_in_order(launches, dual, isolation)


async def _measured_together(launches: _Launches, isolation: str) -> Measurement | _Disagreed:
    """The measurement with its confirmation started beside the first launch, or ``_Disagreed`` when both listed
    tools and they differ. A confirmation beside the first that failed, or was dropped because the first launch was
    retried, is made again after it."""
    early = _Early(launches.run, launches.base)
    result = await _first_round(launches, isolation, early)
    if result.confirmed is None:  # a failure is never confirmed
        return result
    try:
        second = await early.result() if len(result.attempts) == 1 else None
    except BaseException:
        await early.drop(cancel=True)
        raise
    if second is None or not second.ok:  # failed beside the first: made again after it
        await _confirm_after(launches, result)
    elif not _same_tools(second, result.capture):
        return _Disagreed()
    else:
        _confirm(launches.target, second, result.widest_budget_seconds, result)
    return result


async def _measured_in_order(launches: _Launches, dual: bool, isolation: str) -> Measurement:
    """The measurement with every launch started after the one before it has ended (the confirmation when
    ``dual``)."""
    result = await _first_round(launches, isolation, None)
    if dual and result.confirmed is not None:  # a failure is never confirmed
        await _confirm_after(launches, result)
    return result


async def _first_round(launches: _Launches, isolation: str, early: _Early | None) -> Measurement:
    """The first launch and its retries: ``measured`` and ``confirmed=False`` once one listed tools, else the
    failure (``confirmed`` None). ``early`` is dropped when the first launch did not list tools at once."""
    target, run, base = launches.target, launches.run, launches.base
    attempts: list[Capture] = []
    info: list[AttemptInfo] = []
    healed: list[str] = []
    try:
        first, verdict, widest = await _first_good(target, run, attempts, info, base, isolation, healed, early)
    except BaseException:  # cancelled (an interrupted sweep) or a bug: end the early launch too, now
        if early is not None:
            await early.drop(cancel=True)
        raise
    if early is not None and (len(attempts) != 1 or not attempts[0].ok):
        await early.drop()  # the first launch failed: retry, then confirm
    if first is None:
        extra = {"environmentEvidence": verdict.environment, "environmentCause": verdict.cause} \
            if verdict.environment else {}
        failed = Measurement(target, verdict.status, attempts[-1], attempts,
                             [verdict.evidence, *healed, *attempts[-1].notes], launches.deadline, widest, extra=extra,
                             attempt_info=info, budget_seconds=info[-1].budget_seconds)
        if verdict.status == st.PROTOCOL_MISMATCH:
            await _try_discover(run, base, failed)
        return failed
    return Measurement(target, st.MEASURED, first, attempts, healed + first.notes, deadline_seconds=launches.deadline,
                       widest_budget_seconds=widest, attempt_info=info, budget_seconds=widest, confirmed=False)


async def _confirm_after(launches: _Launches, result: Measurement) -> None:
    """Confirm ``result`` with a launch started once every earlier one has ended."""
    await teardown.drain()
    budget = result.widest_budget_seconds
    _confirm(launches.target, await launches.run(budget), budget, result)


def _beside() -> bool:
    """Whether the confirmation starts beside the first launch (in a directory of its own, ``workdir.apart``)."""
    return os.environ.get(CONFIRMATION_VARIABLE) != "after"


def _same_tools(a: Capture, b: Capture) -> bool:
    return stringify(a.tools) == stringify(b.tools)


class _Early:
    """The confirmation started beside the first; once ``launched`` it is awaited, never cancelled."""

    def __init__(self, run, budget: float):
        self.launched = False
        self.task = asyncio.ensure_future(self._apart(run, budget))

    async def _apart(self, run, budget: float) -> Capture:
        with workdir.apart():  # the per-entry directory stays the first launch's, whichever starts first
            return await run(budget, early=self)

    async def result(self) -> Capture:
        return await self.task

    async def drop(self, cancel: bool = False) -> None:
        """Forget it (cancelled while waiting for a slot, else awaited), then drain deferred teardowns."""
        if cancel or not self.launched:
            self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await teardown.drain()


async def _first_good(target: Target, run, attempts: list, info: list, base: float, isolation: str, healed: list,
                      early: _Early | None = None):
    budget = base
    verdict = None
    retried = set()
    while True:
        capture = await run(budget)
        attempts.append(capture)
        role = FIRST if len(attempts) == 1 else RETRY
        if capture.ok:
            info.append(AttemptInfo(role, budget))
            return capture, None, budget
        verdict = st.classify(target, capture)
        info.append(AttemptInfo(role, budget, verdict.status, verdict.evidence))
        group = st.TIMEOUT if verdict.status == st.TIMEOUT else st.STARTUP_FAILURE  # the machine's own: one retry
        if verdict.status not in st.RETRIED or group in retried:
            return None, verdict, budget
        if early is not None:  # the retry never overlaps a launch of the first round
            await early.drop()
            early = None
        retried.add(group)
        if verdict.status == st.TIMEOUT:
            budget = base * RETRY_BUDGET_FACTOR
        elif (note := npx_cache.before_retry(capture.stderr_tail, isolation, _npm_cache(target))) is not None:
            healed.append(note)


def _confirm(target: Target, second: Capture, budget: float, result: Measurement) -> None:
    result.attempts.append(second)
    if not second.ok:
        verdict = st.classify(target, second)
        result.attempt_info.append(AttemptInfo(CONFIRMATION, budget, verdict.status, verdict.evidence))
        return  # the capture stands, unconfirmed: the note is generated from attempt_info
    result.attempt_info.append(AttemptInfo(CONFIRMATION, budget))
    result.confirmed = True
    if not _same_tools(second, result.capture):
        result.status = st.DYNAMIC
        result.notes.append(
            f"tool set differed between two launches: {tool_difference(result.capture.tools or [], second.tools or [])}; "
            "the number is the first launch's capture"
        )


def tool_difference(first: list, second: list) -> str:
    """Which tools differ between two captures, by name."""
    def by_name(tools: list) -> dict:
        return {str(t.get("name")) if isinstance(t, dict) else stringify(t): stringify(t) for t in tools}

    a, b = by_name(first), by_name(second)
    parts = []
    for label, names in (("only in the second", sorted(b.keys() - a.keys())),
                         ("only in the first", sorted(a.keys() - b.keys())),
                         ("changed", sorted(n for n in a.keys() & b.keys() if a[n] != b[n]))):
        if names:
            parts.append(f"{label}: {', '.join(names[:8])}" + (" …" if len(names) > 8 else ""))
    counts = f"{len(first)} vs {len(second)} tools"
    return f"{counts} ({'; '.join(parts)})" if parts else f"{counts} (same definitions in a different order)"


async def _try_discover(run, budget: float, result: Measurement) -> None:
    """After a refused initialize, list tools under a revision the server names, as a separate figure."""
    failure = result.capture.failure
    supported = st.supported_versions(failure.data if failure else None) or []
    handshake = [v for v in supported if v in HANDSHAKE_PROTOCOL_VERSIONS]
    if handshake:
        how = f"initialize at {handshake[-1]} (named in data.supported)"
        capture = await run(budget, version=handshake[-1])
    else:
        how = "server/discover"
        capture = await run(budget, version=MODERN_PROTOCOL_VERSION, conversation=discover)
    if capture.ok:
        result.discover_capture = capture
        result.notes.append(
            f"{how} answered (revision {capture.negotiated_version or capture.requested_version}); its tools/list is "
            "published separately as 'discover', the headline stays protocol-mismatch because it is defined by "
            f"initialize at {result.capture.requested_version}"
        )
    else:
        result.notes.append(f"{how} was also tried and failed: {capture.failure.detail} (phase: {capture.phase})")


def _npm_cache(target: Target):
    return sandbox.server_cache(target.name, target.launch) / "npm"


def _default_launcher(target: Target, pass_declared_values: bool, isolation: str, environ: Mapping[str, str] | None):
    if target.url:
        from harness.probe import remote  # httpx2 is slow to import and only a url target needs it

        async def over_http(t, budget, limits, version, **kwargs):
            return await remote.probe_remote(t, budget, limits, version, environ=environ, **kwargs)

        return over_http

    async def stdio(t, budget, limits, version, **kwargs):
        return await launch.launch_once(t, budget, limits, version, pass_declared_values=pass_declared_values,
                                 isolation=isolation, environ=environ, **kwargs)

    return stdio


def measure_sync(target: Target, **kwargs) -> Measurement:
    """``measure`` for synchronous callers (CLI, tests)."""
    return asyncio.run(measure(target, **kwargs))
