"""The Action's tokens out of reach of what it launches: ``restart`` re-executes without them, ``received`` reads
the comment token back from a pipe. Rule: docs/ACTION.md, "Secrets and forks".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from harness.probe.reaper import PRCTL

TOKEN_INPUT = "INPUT_GITHUB_TOKEN"
FD_VARIABLE = "MCP_CONTEXT_COST_TOKEN_FD"
# The runner gives these to actions (not to run: steps); the harness needs none of them.
RUNNER_SECRETS = ("ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
                  "ACTIONS_RUNTIME_URL", "ACTIONS_RESULTS_URL", "ACTIONS_CACHE_URL")
MAX_TOKEN_BYTES = 32 * 1024  # under a pipe's buffer; the input's own bound is checked later
PR_SET_DUMPABLE = 4


def secret_names(environ: Mapping[str, str]) -> list[str]:
    """The variables no launched process may read: the token input (either spelling) and :data:`RUNNER_SECRETS`."""
    return [k for k in environ if k.upper().replace("-", "_") == TOKEN_INPUT or k in RUNNER_SECRETS]


def restart() -> None:
    """Re-execute this program without the secret variables, the token through a pipe; returns when there is nothing to
    hand over."""
    names = secret_names(os.environ)
    if not names or FD_VARIABLE in os.environ:
        return
    token = next((os.environ[k].strip() for k in names
                  if k.upper().replace("-", "_") == TOKEN_INPUT and os.environ[k].strip()), "")
    read_end, write_end = os.pipe()
    os.write(write_end, token.encode("utf-8", "replace")[:MAX_TOKEN_BYTES])
    os.close(write_end)
    os.set_inheritable(read_end, True)
    environ = {k: v for k, v in os.environ.items() if k not in names} | {FD_VARIABLE: str(read_end)}
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environ)
    except OSError:  # no interpreter path to start again: run on, the variables deleted in-process
        os.close(read_end)


def received(environ: MutableMapping[str, str]) -> str | None:
    """The token :func:`restart` handed over ('' for none), removing its trace from ``environ``; ``None`` when this
    process was not restarted."""
    fd = environ.pop(FD_VARIABLE, None)
    if fd is None or not fd.isdigit():
        return None
    chunks = []
    try:
        while chunk := os.read(int(fd), MAX_TOKEN_BYTES):
            chunks.append(chunk)
        os.close(int(fd))
    except OSError:
        return None
    _not_dumpable()
    return b"".join(chunks).decode("utf-8", "replace")


def _not_dumpable() -> None:
    if PRCTL is not None:
        PRCTL(PR_SET_DUMPABLE, 0, 0, 0, 0)
