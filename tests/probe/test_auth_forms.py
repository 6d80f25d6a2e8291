"""Auth evidence in the forms servers use beyond "<credential> is required": a sign-in they lack, a
credential option a command-line parser says is missing, Python's crash reading an unset credential
variable, a credential variable said to be undefined. Lines of the same shapes about anything but a
credential stay the server's ``startup-failure``."""

from __future__ import annotations

import pytest

from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target

TARGET = Target(name="asker", command="python3 server.py")


def _verdict(tail: str) -> st.Verdict:
    return st.classify(TARGET, Capture("1.0.0", phase="initialize", stderr_tail=tail, exit_code=1,
                                       failure=Failure("exited", "initialize", "the server exited before replying",
                                                       exit_code=1)))


@pytest.mark.parametrize("line", [
    "You must log in first: run `acme-mcp login`",
    "Not authenticated. Run 'acme auth login' to authenticate.",
    "Error: not logged in (run `acme login`)",
    "grpc._channel._InactiveRpcError: status = StatusCode.UNAUTHENTICATED",
    "Error: No credentials found. Please run: npx acme-mcp auth",
    "Error: Login required. Visit https://acme.com/device and enter code ABCD-EFGH",
    "Error: Missing required option '--token <token>'",
    "error: required option '--api-key <key>' not specified",
    "KeyError: 'ACME_API_KEY'",
    'KeyError: "GITLAB_PERSONAL_ACCESS_TOKEN"',
    "Fatal: env var ACME_SECRET_KEY is undefined",
])
def test_a_credential_asked_for_in_these_words_is_auth_required(line):
    tail = f"Traceback (most recent call last):\n  File \"server.py\", line 4, in <module>\n{line}\n"
    verdict = _verdict(tail)
    assert verdict.status == st.AUTH_REQUIRED and line[:40] in verdict.evidence, verdict


@pytest.mark.parametrize("line", [
    "KeyError: 'name'",
    "KeyError: 'ACME_REGION'",
    "Error: Missing required option '--port <port>'",
    "TypeError: x is undefined",
    "warning: session not found",
    "Error: required field 'keyword' missing",
    "ReferenceError: token is not defined",
])
def test_the_same_shapes_about_anything_else_are_the_server_s(line):
    assert _verdict(line + "\n").status == st.STARTUP_FAILURE
