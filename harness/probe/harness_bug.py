"""A bug in the harness itself, kept apart from what a server or input did: one line, exit ``EXIT_CODE``."""

from __future__ import annotations

import os
import traceback

from harness.probe import redact
from harness.probe.measure import Measurement
from harness.probe.outcome import Capture, Failure
from harness.probe.session import REQUESTED_PROTOCOL_VERSION
from harness.probe.status import NOT_YET_RUN
from harness.probe.target import Target

EXIT_CODE = 70  # EX_SOFTWARE in sysexits.h: "an internal software error has been detected"
TRACEBACK_ENV = "MCP_CONTEXT_COST_TRACEBACK"


def describe(exc: BaseException) -> str:
    """``<ExceptionType>: <message>`` on one line, at most 300 characters, redacted before the cut."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return redact.carried(exc).cut(" ".join(text.split()), 300)


def message(exc: BaseException, subject: str | None) -> str:
    """The one line the command line prints (unescaped: print it through ``untrusted.line``)."""
    where = f" while working on {subject}" if subject else ""
    return (f"internal error: a bug in mcp-context-cost{where} — not a fault of the server or of the input: "
            f"{describe(exc)} (exit {EXIT_CODE}; set {TRACEBACK_ENV}=1 for the traceback)")


def traceback_text(exc: BaseException) -> str | None:
    """The redacted traceback when ``MCP_CONTEXT_COST_TRACEBACK=1``, else ``None``."""
    if os.environ.get(TRACEBACK_ENV) != "1":
        return None
    return redact.carried(exc).text("".join(traceback.format_exception(exc)))


def measurement(target: Target, exc: BaseException) -> Measurement:
    """The measurement a sweep records when measuring ``target`` raised ``exc``: ``not-yet-run``, the error as
    ``harnessError``."""
    capture = Capture(requested_version=REQUESTED_PROTOCOL_VERSION, phase="harness")
    capture.failure = Failure("harness", "harness", describe(exc))
    note = (f"harness error: a bug in mcp-context-cost ended this measurement ({describe(exc)}); nothing is claimed "
            "about the server, which is measured again in the next sweep")
    return Measurement(target, NOT_YET_RUN, capture, [capture], [note], extra={"harnessError": describe(exc)})
