"""One measurement of one target: attempts with retries, then an independent second launch.

Rules (methodology, "Failure taxonomy"; issue #3):
  * startup-failure is retried once, after the first attempt has warmed the package cache;
    timeout is retried once with double the budget; other failures are final at once — among them
    ``unreachable`` (a ``url`` that gave no MCP answer: no package cache is involved, issue #11) and
    ``malformed-reply`` (a reply arrived and is refused: the same bytes would come back).
  * a good capture is confirmed by a second, independent launch. Different canonical tool sets →
    ``dynamic`` (the number is the first capture's); a second launch that fails keeps the first
    capture, which is then *unconfirmed* (``confirmed = False``; issue #10).
  * scheduling (issue #16, item 2): the confirmation is started *beside* the first launch, not
    after it — they are independent launches. Only the order changes, never a rule: its capture is
    used when the first launch listed its tools at once and it listed tools too. When the first
    launch failed, the early confirmation is dropped (never counted, never noted) and, once it has
    ended, the rules above run as before: retry, then a confirmation. When it failed while the first
    listed, it is dropped too and the confirmation is made again after the first has ended, as
    before — a failure that only two launches at once produce (two installs racing in one package
    cache) must not make a capture unconfirmed. ``launch_slots`` bounds launches in flight;
    ``MCP_CONTEXT_COST_CONFIRMATION=after`` restores the old order (fixtures scripted by launch order),
    and a ``host`` stdio launch always keeps it (``_beside``: two launches at once cannot share one
    working directory path, and each must start in an empty one; review of issue #16).
  * one overall deadline bounds the whole measurement, whatever the retries do.
  * the secrets the target hands its server (``redact.Secrets.for_target``) are current while it
    runs, so transports redact what they cut, and every capture is redacted as it arrives —
    before a status is decided, a note is written or a retry is prepared (issue #9).

Every launch is kept as an :class:`AttemptInfo` beside its ``Capture``: its role (first, retry,
confirmation), the budget it was given (seconds) and, when it failed, the status and evidence it
alone would have been published with. The record's notes about retries and the confirmation are
generated from that list (``harness.probe.attempt_notes``), never written by hand here, so they
cannot say something the attempts did not do (issue #10).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.core.canonical import stringify
from harness.probe import heal, redact, side_lists, teardown, warmup
from harness.probe import status as st
from harness.probe.limits import Limits
from harness.probe.limits import from_env as limits_from_env
from harness.probe.outcome import Capture
from harness.probe.session import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSION, REQUESTED_PROTOCOL_VERSION, discover
from harness.probe.target import Target

RETRY_BUDGET_FACTOR = 2.0
# "after": the confirmation waits for the first launch to end, as before issue #16 — for servers
# (test fixtures) whose behaviour is scripted by the order their launches start in.
CONFIRMATION_VARIABLE = "MCP_CONTEXT_COST_CONFIRMATION"


FIRST, RETRY, CONFIRMATION = "first", "retry", "confirmation"


@dataclass(frozen=True)
class AttemptInfo:
    """One launch as the notes describe it: ``role`` (``first``, ``retry`` or ``confirmation``),
    ``budget_seconds`` it was given, and for a failed launch the ``status`` and ``evidence`` it
    alone would have been published with (``None`` for a launch that listed its tools)."""

    role: str
    budget_seconds: float
    status: str | None = None
    evidence: str | None = None


@dataclass
class Measurement:
    """The outcome: ``status``, the ``capture`` whose numbers are published (the first good one, or
    the last failed attempt), every attempt in order (``attempts``, with ``attempt_info`` beside
    each), and evidence notes (strings; the retry narrative is generated from ``attempt_info``).

    ``budget_seconds``: the budget of the attempt whose capture is published. ``confirmed``: for a
    capture, whether a second launch listed tools too (``False`` when it failed or none was made);
    ``None`` for a failure."""

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
        """Wait until every process this measurement started has ended (at once, unless the caller
        holds an outer ``teardown.scope()``); then every attempt's ``exit_code`` is final. Call it
        before building the record: ``attempts[].exitCode`` is published (issue #16)."""
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
    """Measure ``target`` and return a ``Measurement``; never raises for server behaviour.

    ``limits`` default to ``harness.probe.limits.from_env()`` (documented bounds, overridable by
    environment variables). ``launcher(target, budget_seconds, limits, requested_version)`` performs one launch (defaults to
    stdio ``launch_once``, or the Streamable HTTP probe for a ``url`` target, each listing the
    resources/prompts side figures after the tools: ``side_lists.with_side_lists``).
    ``environ`` (default ``os.environ``) is where the server's environment comes from — declared
    names' values, ``MCP_HEADER_*`` header values, the base and network settings handed to every
    child. The harness's own settings (limits, caches, ``bwrap``, process tracking) always come
    from ``os.environ``: a caller handing a server values someone else chose (``audit``: a client
    config's ``env``) passes them here, never through ``os.environ`` (issue #9, kind 4).

    ``launch_slots`` (issue #16): ``None``, or an async context manager entered around every launch
    this measurement makes (an ``asyncio.Semaphore`` shared by a sweep): the two launches of a
    measurement started together count as two. The measurement's overall deadline starts when its
    first launch gets a slot. A one-slot semaphore makes the launches strictly one after another.

    Every process a launch started has ended when this returns, unless the caller holds an open
    ``teardown.scope()``: the teardown of a good capture then continues beside the caller's next step
    and ends when that scope does (``harness.probe.teardown``); ``await result.ended()`` waits for
    this measurement's own, which the record needs first (its attempts' exit codes).

    Before any launch, an ``npx``/``uvx`` package is installed once under its own bound
    (``harness.probe.install``; ``installed``: an ``Install`` the caller already made — ``Install(target)``
    makes none, and the launcher installs as it launches). An install
    that fails is the measurement: its attempts are the install runs (role ``install``), no launch
    is made.
    """
    from harness.probe import install as installing

    limits = limits or limits_from_env()
    secrets = redact.Secrets.for_target(target, environ)
    launcher = _redacting(launcher or side_lists.with_side_lists(
        _default_launcher(target, pass_declared_values, isolation, environ)), secrets)
    deferred: list = []
    with redact.activated(secrets):
        if installed is None:
            installed = await installing.install(target, isolation, pass_declared_values=pass_declared_values,
                                                 environ=environ, requested_version=requested_version)
        target = installed.target
        if installed.failures:
            result = _install_failed(target, installed, secrets)
        else:
            async with teardown.scope() as deferred:
                result = await _measure(target, limits, requested_version, dual, isolation, launcher,
                                        launch_slots or contextlib.nullcontext())
            _weigh_findings(result, installed.findings)
    result.secrets = secrets
    result.teardowns = deferred
    return result


INSTALL = "install"


def _install_failed(target: Target, installed, secrets: redact.Secrets) -> Measurement:
    """The measurement of a target whose install failed: the install runs are its attempts, the
    last one's verdict its status and evidence (no launch was made)."""
    from harness.probe.install import bound_seconds

    bound = bound_seconds()
    attempts = [redact.scrub_capture(c, secrets) for c in installed.failures]
    verdicts = [st.classify(target, c) for c in attempts]
    if installed.locked:  # a process of this machine kept the cache: nothing was tried of the server
        from harness.probe import machine

        verdicts[-1] = st.environment_verdict(verdicts[-1], attempts[-1].failure.detail, machine.CACHE_LOCKED)
    info = [AttemptInfo(INSTALL, bound, v.status, v.evidence) for v in verdicts]
    verdict = verdicts[-1]
    extra = {"environmentEvidence": verdict.environment, "environmentCause": verdict.cause} \
        if verdict.environment else {}
    return Measurement(target, verdict.status, attempts[-1], attempts, [verdict.evidence, *installed.notes],
                       bound, bound, extra=extra, attempt_info=info, budget_seconds=bound)


def _weigh_findings(result: Measurement, findings: tuple[str, ...]) -> None:
    """A launch that failed after an install warned that this machine's Node is older than the
    package declares (``Install.findings``): ``not-measured-here`` when that warning is about the
    package itself or the failure said nothing of its own; otherwise the warning is noted."""
    if not findings or result.status not in (st.STARTUP_FAILURE, st.TIMEOUT):
        return
    from harness.probe import machine

    finding = findings[0]
    if impossible := machine.impossible_engine(finding):  # the package's mistake: no Node would run it
        result.notes.append(f"the install warned: {finding}; {impossible}")
        return
    package = result.target.resolved.package if result.target.resolved is not None else None
    silent = st.last_line(result.capture.stderr_tail) is None
    if silent or (package and (finding.startswith(f"{package}@") or f" {package}@" in finding)):
        verdict = st.environment_verdict(st.Verdict(result.status, result.notes[0]), finding, machine.cause(finding))
        result.status, result.notes[0] = verdict.status, verdict.evidence
        result.extra |= {"environmentEvidence": verdict.environment, "environmentCause": verdict.cause}
    else:
        result.notes.append(f"the install warned: {finding}")


def _redacting(launcher, secrets: redact.Secrets):
    """``launcher`` whose every capture is redacted before anyone reads it."""
    async def launch(*args, **kwargs) -> Capture:
        return redact.scrub_capture(await launcher(*args, **kwargs), secrets)

    return launch


async def _measure(target: Target, limits: Limits, requested_version: str, dual: bool, isolation: str,
                   launcher, slots) -> Measurement:
    base = float(target.timeout_seconds)
    deadline = base * (1 + RETRY_BUDGET_FACTOR + 1) + 30.0
    ends: list[float] = []  # the overall deadline, set when the first launch gets its slot

    async def run(budget: float, early: _Early | None = None, **kwargs) -> Capture:
        async with slots:
            if early is not None:
                early.launched = True
            if not ends:
                ends.append(time.monotonic() + deadline)
                warmup.begin()  # the tokenizer and runtime versions load beside the first launch
            remaining = max(1.0, ends[0] - time.monotonic())
            return await launcher(target, min(budget, remaining), limits, kwargs.pop("version", requested_version),
                                  **kwargs)

    attempts: list[Capture] = []
    info: list[AttemptInfo] = []
    healed: list[str] = []
    early = _Early(run, base) if dual and _beside(target, isolation) else None
    try:
        first, verdict, widest = await _first_good(target, run, attempts, info, base, isolation, healed, early)
    except BaseException:  # cancelled (an interrupted sweep) or a bug: end the early launch too, now
        if early is not None:
            await early.drop(cancel=True)
        raise
    if early is not None and (len(attempts) != 1 or not attempts[0].ok):
        await early.drop()  # the first launch failed: the rules run as before
    if first is None:
        extra = {"environmentEvidence": verdict.environment, "environmentCause": verdict.cause} \
            if verdict.environment else {}
        failed = Measurement(target, verdict.status, attempts[-1], attempts,
                             [verdict.evidence, *healed, *attempts[-1].notes], deadline, widest, extra=extra,
                             attempt_info=info, budget_seconds=info[-1].budget_seconds)
        if verdict.status == st.PROTOCOL_MISMATCH:
            await _try_discover(run, base, failed)
        return failed
    result = Measurement(target, st.MEASURED, first, attempts, healed + first.notes, deadline_seconds=deadline,
                         widest_budget_seconds=widest, attempt_info=info, budget_seconds=widest, confirmed=False)
    if dual:
        try:
            second = await early.result() if early is not None and len(attempts) == 1 else None
        except BaseException:
            await early.drop(cancel=True)
            raise
        if second is None or not second.ok:  # failed beside the first: made again after it, as before
            await teardown.drain()
            second = await run(widest)
        _confirm(target, second, widest, result)
    return result


def _beside(target: Target, isolation: str) -> bool:
    """Whether the confirmation may start beside the first launch: not when ``CONFIRMATION_VARIABLE``
    says ``after``, nor for a ``host`` stdio launch — it would see another working directory path
    than the first (both cannot use the same one at once: ``harness.probe.workdir``), and a server
    that names its directory in a description would read as ``dynamic`` (review of issue #16)."""
    if os.environ.get(CONFIRMATION_VARIABLE) == "after":
        return False
    return bool(target.url) or isolation != "host" or target.cwd is not None


class _Early:
    """The confirmation launch started beside the first (issue #16, item 2). ``launched``: it holds
    a slot and a launch is under way (from then on it is awaited, never cancelled, so the launch
    always tears down what it started)."""

    def __init__(self, run, budget: float):
        self.launched = False
        self.task = asyncio.ensure_future(run(budget, early=self))

    async def result(self) -> Capture:
        return await self.task

    async def drop(self, cancel: bool = False) -> None:
        """Forget it: cancelled while it still waits for a slot (or, with ``cancel``, whatever it is
        doing: ``launch_once`` then ends its process before the task ends), else awaited to its
        end; then every teardown deferred so far is awaited, so what comes next never overlaps it."""
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
        elif (note := heal.before_retry(capture.stderr_tail, isolation, _npm_cache(target))) is not None:
            healed.append(note)


def _confirm(target: Target, second: Capture, budget: float, result: Measurement) -> None:
    """Adopt ``second``, the confirmation launch made with ``budget`` seconds, into ``result``."""
    result.attempts.append(second)
    if not second.ok:
        verdict = st.classify(target, second)
        result.attempt_info.append(AttemptInfo(CONFIRMATION, budget, verdict.status, verdict.evidence))
        return  # the capture stands, unconfirmed: the note is generated from attempt_info
    result.attempt_info.append(AttemptInfo(CONFIRMATION, budget))
    result.confirmed = True
    if stringify(second.tools) != stringify(result.capture.tools):
        result.status = st.DYNAMIC
        result.notes.append(
            f"tool set differed between two launches: {tool_difference(result.capture.tools, second.tools)}; "
            "the number is the first launch's capture"
        )


def tool_difference(first: list, second: list) -> str:
    """Which tools differ between two captures, by name: added, removed, or changed definitions."""
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
    """After a refused initialize, list tools under the revision the server says it speaks — an
    ``initialize`` at a handshake revision named in ``data.supported``, else ``server/discover``
    (2026-07-28) — and keep it as a separate, labelled figure."""
    supported = st.supported_versions(result.capture.failure.data) or []
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
    from harness.probe.sandbox import server_cache

    return server_cache(target.name, target.launch) / "npm"


def _default_launcher(target: Target, pass_declared_values: bool, isolation: str, environ: Mapping[str, str] | None):
    if target.url:
        from harness.probe.remote import probe_remote

        async def remote(t, budget, limits, version, **kwargs):
            return await probe_remote(t, budget, limits, version, environ=environ, **kwargs)

        return remote
    from harness.probe.launch import launch_once

    async def stdio(t, budget, limits, version, **kwargs):
        return await launch_once(t, budget, limits, version, pass_declared_values=pass_declared_values,
                                 isolation=isolation, environ=environ, **kwargs)

    return stdio


def measure_sync(target: Target, **kwargs) -> Measurement:
    """``measure`` for synchronous callers (CLI, tests)."""
    return asyncio.run(measure(target, **kwargs))
