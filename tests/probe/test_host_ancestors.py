"""What a ``host``-isolation server can read of the processes above it (docs/SECURITY.md, "host").

A host-mode server once read its parent's ``/proc/<ppid>/environ`` — the harness's — and so every
variable of the shell or CI step, declared or not. Now its parent is a clean intermediate whose own
environment is exactly the server's, and the harness is not dumpable, so a process of the same user
without ``CAP_SYS_PTRACE`` reads neither its ``environ`` nor its ``mem``, ``maps`` or descriptors.
What started the harness (a shell, a CI step) is outside the harness's reach and stays readable:
the tests show that too, as the limit docs/SECURITY.md states.

The server (``reads_ancestors.py``) walks from its parent up to pid 1 and scans every process it
can, for environment entries named ``ISOLATION_CANARY_*``. ``ISOLATION_CANARY_HARNESS`` is set only
in the harness's own environment (never declared for the server); ``ISOLATION_CANARY_SHELL`` in the
shell that starts it. As root (CI, containers) any process may read any other's memory: there the
tests check the parent only, and the same-user checks run as an unprivileged user (``nobody``)
with the system Python reading the project's virtual environment.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness.core import tokenizer
from tests.conftest import FIXTURE_SERVERS, REPO

HARNESS_CANARY = "ISOLATION_CANARY_HARNESS=harness-only-value-5Gk2"
SHELL_CANARY = "ISOLATION_CANARY_SHELL=shell-value-9Tb7"
SERVER = str(FIXTURE_SERVERS / "reads_ancestors.py")
NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.fixture
def place():
    """A folder every user can use (pytest's own temp folders are the owner's only), with the
    tokenizer's cache in it, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="mcp-context-cost-ancestors-"))
    (folder / "cache" / "tiktoken").mkdir(parents=True)
    shutil.copy(tokenizer.cache_path(), folder / "cache" / "tiktoken" / tokenizer.cache_path().name)
    (folder / "project").mkdir()
    for path in [folder, *folder.rglob("*")]:
        if os.geteuid() == 0:
            os.chown(path, NOBODY, NOBODY)
        path.chmod(0o755 if path.is_dir() else 0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _as_unprivileged_user() -> list[str]:
    """The prefix that runs the harness as a user without privileges (empty when this already is one)."""
    if os.geteuid() != 0:
        return [sys.executable]
    if shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("setpriv or the system Python is missing: cannot run the harness as an unprivileged user")
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    if probe.stdout.strip() != str(sys.version_info[:2]):
        pytest.skip("the system Python is not the virtual environment's version: its packages cannot be reused")
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", SYSTEM_PYTHON]


def harness(place: Path, args: list[str], unprivileged: bool) -> subprocess.CompletedProcess:
    """``mcp-context-cost ARGS`` started by a shell holding ``SHELL_CANARY``, with ``HARNESS_CANARY``
    set for the harness alone (the shell stays its parent, so both are above the server)."""
    python = _as_unprivileged_user() if unprivileged else [sys.executable]
    if not unprivileged and os.geteuid() == 0:  # the harness refuses a cache folder another user could replace
        for path in [place, place / "cache", *(place / "cache").rglob("*")]:
            os.chown(path, 0, 0)
    paths = [str(REPO), *site.getsitepackages()] if unprivileged else [str(REPO)]
    environ = {name: value for name, value in os.environ.items() if not name.startswith("ISOLATION_CANARY")}
    environ.update(dict([SHELL_CANARY.split("=", 1)]), HOME=str(place), MCP_CONTEXT_COST_CACHE=str(place / "cache"),
                   PYTHONPATH=os.pathsep.join(paths))
    script = f'{HARNESS_CANARY} "$@"; exit $?'  # not the last command alone: the shell stays
    runner = python[:-1] + ["sh", "-c", script, "sh", python[-1], "-m", "harness.cli", *args]
    return subprocess.run(runner, cwd=place / "project", env=environ, capture_output=True, text=True, timeout=240)


def server_command(place: Path, shell: bool = False, poll: float = 0.0) -> str:
    command = shlex.join([SYSTEM_PYTHON, SERVER, "--canary", "ISOLATION_CANARY", "--report", str(place / "seen.json"),
                          "--poll", str(poll)])
    return shlex.join(["sh", "-c", command + "; exit $?"]) if shell else command


def seen(place: Path, done: subprocess.CompletedProcess) -> dict:
    report = place / "seen.json"
    assert report.exists(), done.stdout + done.stderr
    return json.loads(report.read_text())


def harness_entry(chain: list[dict], done: subprocess.CompletedProcess) -> dict:
    """The harness in the server's chain of ancestors: the process right below the shell."""
    shells = [i for i, p in enumerate(chain) if p["name"] == "sh" and SHELL_CANARY in p["canary"]]
    assert shells, (chain, done.stderr)
    return chain[shells[0] - 1]


VARIANTS = {
    "measure": lambda place: ["measure", "--command", server_command(place), "--name", "ancestors", "--isolation",
                              "host", "--single", "--timeout", "30", "--out", str(place / "out")],
    "measure-under-a-shell": lambda place: ["measure", "--command", server_command(place, shell=True), "--name",
                                            "ancestors", "--isolation", "host", "--single", "--timeout", "30",
                                            "--out", str(place / "out")],
    "measure-catalog-entry": lambda place: _catalog(place) + ["--isolation", "host", "--single"],
    # both launches; each makes a git repository while the other's server may be scanning
    "measure-entry-needing-git": lambda place: _catalog(place, needs_git=True) + ["--isolation", "host"],
    "audit": lambda place: _user_config(place) + ["audit", "--isolation", "host", "--single", "--json",
                                                    "--timeout", "30"],
}


def _catalog(place: Path, needs_git: bool = False) -> list[str]:
    command = server_command(place, poll=3.0 if needs_git else 0.0)
    (place / "project" / "servers.yaml").write_text(
        f"servers:\n  - name: ancestors\n    command: {json.dumps(command)}\n    needsGit: {str(needs_git).lower()}\n")
    return ["measure", "--server", "ancestors", "--catalog", str(place / "project" / "servers.yaml")]


def _user_config(place: Path) -> list[str]:
    """Claude Code's user-scope config (``~/.claude.json``) naming the server; no arguments."""
    argv = shlex.split(server_command(place))
    config = {"mcpServers": {"ancestors": {"command": argv[0], "args": argv[1:]}}}
    (place / ".claude.json").write_text(json.dumps(config))
    (place / ".claude.json").chmod(0o644)
    return []


def _published(place: Path, done) -> str:
    """Everything the run published or printed."""
    texts = [done.stdout, done.stderr] + [p.read_text() for p in place.rglob("*.json") if p.is_file()
                                          and "cache" not in p.parts]
    return "\n".join(texts)


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_servers_parent_holds_only_what_the_server_was_given(variant, place):
    done = harness(place, VARIANTS[variant](place), unprivileged=False)
    found = seen(place, done)
    chain = found["chain"]
    below = 1 if variant == "measure-under-a-shell" else 0  # the server's own shell comes first
    parent = chain[below]
    assert parent["canary"] == [], parent
    own = set(found["own"]) - {"PWD", "SHLVL", "_", "OLDPWD"}  # what a shell adds to its own
    assert set(parent["environ"]) - {"PWD", "SHLVL", "_", "OLDPWD"} == own, (parent, found["own"])
    assert HARNESS_CANARY.split("=")[1] not in json.dumps(chain[:below + 1])
    assert all(HARNESS_CANARY not in entries for pid, entries in found["anywhere"].items()
               if int(pid) in {p["pid"] for p in chain[:below + 1]})


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_same_user_server_reads_nothing_of_the_harness(variant, place):
    done = harness(place, VARIANTS[variant](place), unprivileged=True)
    found = seen(place, done)
    assert not any(HARNESS_CANARY in entries for entries in found["anywhere"].values()), found["anywhere"]
    assert HARNESS_CANARY.split("=")[1] not in _published(place, done)
    me = harness_entry(found["chain"], done)
    for what in ("environ", "mem", "maps", "fd", "auxv"):
        assert str(me[what]).startswith("error: Permission denied"), (what, me)
    assert me["cmdline"] == "ok"  # the command line of every process is public: nothing secret goes there
    # the limit: what started the harness is the user's own process, readable by anything they run
    shell = next(p for p in found["chain"] if SHELL_CANARY in p["canary"])
    assert shell["environ"] and not str(shell["environ"]).startswith("error")


@pytest.mark.parametrize("ending,code", [("exit 7", 7), ("kill -TERM $$", -15), ("exit 0", 0)])
def test_the_intermediate_passes_on_how_the_server_ended(ending, code):
    """The intermediate is invisible to the protocol: the server's exit code or signal is the
    launch's, and so is what it wrote to stderr."""
    from harness.probe.measure import measure_sync
    from harness.probe.target import Target

    command = shlex.join(["sh", "-c", f"echo ending-now >&2; {ending}"])
    ended = measure_sync(Target(name="ends", command=command, timeout_seconds=20), isolation="host", dual=False)
    assert ended.capture.failure.kind == "exited" and ended.capture.exit_code == code, ended.notes
    assert "ending-now" in ended.capture.stderr_tail


def test_a_program_the_intermediate_cannot_start_is_a_spawn_failure_naming_it(tmp_path):
    from harness.probe.measure import measure_sync
    from harness.probe.target import Target
    from tests.conftest import fixture_command

    missing = tmp_path / "no-interpreter"
    missing.write_text("#!/nonexistent/interpreter\n")
    missing.chmod(0o755)
    spawn = measure_sync(Target(name="spawn", command=str(missing), timeout_seconds=20), isolation="host", dual=False)
    assert spawn.capture.failure.kind == "spawn" and f"cannot start {missing}" in spawn.capture.failure.detail
    ok = measure_sync(Target(name="ok", command=fixture_command("well_behaved"), timeout_seconds=20),
                      isolation="host", dual=False)
    assert ok.status == "measured"


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05])
def test_a_launch_cancelled_while_its_server_starts_leaves_nothing(delay, tmp_path):
    """Cancelled between the intermediate's start and the server's exec (the harness is waiting for
    the intermediate's word): both end, though no transport holds them yet."""
    import asyncio

    from harness.probe import isolation, reaper
    from harness.probe.measure import measure
    from harness.probe.target import Target
    from tests.conftest import fixture_command

    target = Target(name="cancel-start", command=fixture_command("never_answers", "--ignore-eof", "--ignore-sigterm"),
                    timeout_seconds=600, cwd=str(tmp_path))
    isolation.runtime_versions()  # the warm-up's own probes (npm --version…) are done before
    before = reaper.descendants(os.getpid())

    def ours() -> set[int]:
        return {pid for pid in reaper.descendants(os.getpid()) - before if reaper.alive(pid)}

    async def cancelled_early():
        task = asyncio.ensure_future(measure(target, isolation="host", dual=False))
        while not ours() and not task.done():
            await asyncio.sleep(0.001)
        await asyncio.sleep(delay)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=120)
        return done

    assert asyncio.run(cancelled_early()), "the cancelled measurement did not end"
    left = ours()
    assert not left, [open(f"/proc/{p}/cmdline").read() for p in left]


@pytest.mark.parametrize("args", [["--version"], ["verify", "/nonexistent"], ["measure", "--help"]])
def test_the_command_line_is_not_dumpable_before_it_reads_anything(args):
    """Not only from the first launch on: a process of the user that watches for the harness (one a
    host-mode server left behind, say) finds it unreadable from the moment its command line runs,
    whatever the command and however it ends (argparse's own exit included)."""
    probe = ("import ctypes, sys\n"
             "from harness.cli import main\n"
             "prctl = ctypes.CDLL(None).prctl\n"
             "try:\n"
             "    main(sys.argv[1:])\n"
             "except SystemExit:\n"
             "    pass\n"
             "print('DUMPABLE', prctl(3, 0, 0, 0, 0))\n")
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.strip().splitlines()[-1] == "DUMPABLE 0", done.stdout + done.stderr
