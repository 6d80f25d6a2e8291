"""What the harness runs for itself (git for a throwaway repository, ``npm pack`` for the tokenizer,
the bubblewrap and Docker probes) gets only what that program needs of the harness's environment.

Such a process may run while a ``host``-mode server does, is dumpable, and is the user's: the
server can read its ``/proc/<pid>/environ``. Given the harness's whole environment it would hand
over what the non-dumpable harness keeps to itself (docs/SECURITY.md, "host"). Each program really
runs here; only ``npm pack`` is answered by the spy, so the test needs no registry.
"""

from __future__ import annotations

import subprocess

import pytest

from harness.core import tokenizer
from harness.probe import isolation
from harness.probe.workdir import prepare_workdir

CANARY = "HARNESS_ONLY_CANARY"


@pytest.fixture
def started(monkeypatch) -> list[tuple[list[str], dict | None]]:
    """Every ``subprocess.run`` call's argv and env, with ``CANARY`` in the harness's environment."""
    monkeypatch.setenv(CANARY, "harness-only-value-Jq83")
    calls: list[tuple[list[str], dict | None]] = []
    real = subprocess.run

    def spy(argv, *args, **kwargs):
        calls.append((list(argv), kwargs.get("env")))
        if "pack" in argv:
            return subprocess.CompletedProcess(argv, 1, "", "not fetched in this test")
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)
    return calls


def test_nothing_the_harness_runs_for_itself_carries_its_environment(started, tmp_path):
    prepare_workdir(tmp_path, needs_git=True)
    isolation._bwrap_works.cache_clear()
    isolation._bwrap_works()
    isolation._docker_problem()
    if tokenizer.shutil.which("npm"):
        with pytest.raises(RuntimeError, match="npm pack"):
            tokenizer._fetch_npm_tarball()
    programs = {argv[0].rsplit("/", 1)[-1] for argv, _ in started}
    assert {"git"} <= programs, programs
    for argv, env in started:
        assert env is not None, f"{argv[0]} inherits the harness's whole environment"
        assert CANARY not in env, argv
    isolation._bwrap_works.cache_clear()
