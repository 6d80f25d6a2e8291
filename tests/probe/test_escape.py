"""Escape from isolation: what an entry or a server tries, against what holds.

Each test launches a real sandbox (bubblewrap) around a hostile fixture or a real shared library and
checks the host afterwards: no file written where the server must not write, no planted cache file
seen by another server, no host secret read, nothing from the entry in the host-side launcher's
environment or command line.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.jsparse import parse
from harness.probe import launch, sandbox
from harness.probe.limits import Limits
from harness.probe.measure import measure_sync
from harness.probe.session import converse
from harness.probe.target import Target
from tests.conftest import FIXTURE_SERVERS, REPO, fixture_command
from tests.probe.helpers import nothing_left, results_root  # noqa: F401

SENTINEL = "sentinel0value0from0the0entry"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing: scripts/setup.sh installs it")
pytestmark = needs_bwrap

PRELOAD_C = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/loaded-into-%d", TARGET, (int) getpid());
    FILE *f = fopen(path, "w");
    if (f) { fputs("a preloaded library ran here\n", f); fclose(f); }
}
"""


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    """Sandbox caches under this test's temp dir (``MCP_CONTEXT_COST_CACHE``)."""
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "sandbox"


@pytest.fixture
def preload_library(tmp_path) -> tuple[Path, Path]:
    """``(library, target dir)``: a shared library whose constructor writes a file into the target
    dir (an empty host directory) from whatever process loads it."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the preload library")
    target = tmp_path / "host-target"
    target.mkdir()
    source = tmp_path / "planted.c"
    source.write_text(PRELOAD_C)
    library = tmp_path / "libplanted.so"
    subprocess.run([compiler, "-shared", "-fPIC", f'-DTARGET="{target}"', "-o", str(library), str(source)],
                   check=True, capture_output=True)
    subprocess.run(["true"], env={"LD_PRELOAD": str(library), "PATH": os.defpath}, check=True)
    assert list(target.iterdir()), "the library does write when preloaded (the probe itself works)"
    for made in target.iterdir():
        made.unlink()
    return library, target


def probe(measurement) -> dict:
    tool = next(t for t in measurement.capture.tools if t["name"] == "probe")
    return parse(tool["description"].removeprefix("PROBE "))


def sandboxed(name: str, *flags: str, **target) -> tuple:
    """Measure ``sandbox_probe.py FLAGS`` once under the sandbox; ``(measurement, probe report)``."""
    m = measure_sync(Target(name=name, command=fixture_command("sandbox_probe", *flags), timeout_seconds=30, **target),
                     isolation="sandbox", dual=False)
    assert m.status == "measured", m.notes
    return m, probe(m)


# --- the entry's environment never reaches the host-side launcher ---------------------------------

@pytest.mark.parametrize("variable", ["LD_PRELOAD", "LD_AUDIT"])
def test_a_preload_variable_in_set_env_is_refused_at_launch(variable, preload_library, own_cache):
    library, target = preload_library
    m = measure_sync(Target(name="preload", command=fixture_command("well_behaved"), timeout_seconds=30,
                            set_env=((variable, str(library)),)), isolation="sandbox", dual=False)
    assert m.status == "startup-failure" and m.capture.phase == "spawn"
    assert f"environment variable '{variable}' is refused" in m.notes[0]
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("variable", ["LD_PRELOAD", "LD_AUDIT"])
def test_even_unrefused_a_preload_variable_never_runs_host_side(variable, preload_library, own_cache, monkeypatch):
    # Were the refusal bypassed, the value reaches only the sandboxed server, never bwrap itself:
    # bwrap runs with an empty environment and gets the server's through --args.
    library, target = preload_library
    monkeypatch.setattr(launch, "_refuse_names", lambda t: None)
    m = measure_sync(Target(name="preload", command=fixture_command("well_behaved", "--describe-env", variable),
                            timeout_seconds=30, set_env=((variable, str(library)),)), isolation="sandbox", dual=False)
    assert m.status == "measured", m.notes
    assert list(target.iterdir()) == [], "a preloaded library ran outside the sandbox"


def test_bwrap_itself_sees_no_value_from_the_entry(own_cache, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", SENTINEL + "-declared")
    seen = {}

    async def look_then_converse(transport, capture, limits):
        pid = transport.pid
        seen["environ"] = Path(f"/proc/{pid}/environ").read_bytes()
        seen["cmdline"] = Path(f"/proc/{pid}/cmdline").read_bytes()
        seen["exe"] = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        await converse(transport, capture, limits)

    target = Target(name="env-check", command=fixture_command("well_behaved", "--describe-env", "FIXED",
                                                              "--describe-env", "MY_API_KEY"),
                    env=("MY_API_KEY",), set_env=(("FIXED", SENTINEL),), timeout_seconds=30)
    capture = asyncio.run(launch.launch_once(target, 30, Limits(), "2025-11-25", conversation=look_then_converse,
                                             pass_declared_values=True, isolation="sandbox"))
    assert capture.ok, capture.failure
    assert seen["exe"] == "bwrap"
    assert [v.split(b"=")[0] for v in seen["environ"].split(b"\0") if v] == [b"MCP_CONTEXT_COST_LAUNCH"]
    assert SENTINEL.encode() not in seen["cmdline"] and b"--args" in seen["cmdline"]
    report = next(t for t in capture.tools if t["name"] == "env_report")["description"]
    values = parse(report.removeprefix("ENV "))["values"]
    assert values == {"FIXED": SENTINEL, "MY_API_KEY": "mcp-context-cost-dummy-my_api_key"}  # sandbox: dummies


# --- a server cannot write outside its working directory and its own cache ------------------------

def test_escape_routes_write_no_host_file(tmp_path, own_cache):
    host_target = tmp_path / "host-target"
    host_target.mkdir()
    before = sorted(p.name for p in FIXTURE_SERVERS.iterdir()), sorted(p.name for p in REPO.iterdir())
    m, seen = sandboxed(
        "escape-routes",
        "--write", str(host_target / "via-tmp"),                 # /tmp is the sandbox's own
        "--write", str(REPO / "planted-in-checkout"),            # the checkout is not there at all
        "--write", str(FIXTURE_SERVERS / "planted-in-script-dir"),  # bound read-only
        "--write", "/usr/planted", "--write", "/etc/planted", "--write", str(Path(sys.prefix) / "planted"),
        "--write", "/proc/1/root/planted-via-proc",
        "--remount", str(FIXTURE_SERVERS),                       # needs a capability it does not have
        "--hardlink", str(FIXTURE_SERVERS / "_mcp.py"))          # across mounts: EXDEV
    assert list(host_target.iterdir()) == []
    assert (sorted(p.name for p in FIXTURE_SERVERS.iterdir()), sorted(p.name for p in REPO.iterdir())) == before
    assert not (Path(sys.prefix) / "planted").exists() and not Path("/usr/planted").exists()
    assert seen["remount"]["mount"] != 0 and seen["remount"]["then"].startswith("error:")
    assert seen["hardlink"].startswith("error:")
    for path in ("/usr/planted", "/etc/planted", str(FIXTURE_SERVERS / "planted-in-script-dir")):
        assert seen["write"][path].startswith("error:"), (path, seen["write"][path])


# --- a server's package cache is its own ------------------------------------------------------------

def test_a_file_planted_in_the_cache_is_invisible_to_the_next_server(own_cache):
    _, planter = sandboxed("planter", "--plant", "from-planter", "--look")
    assert set(planter["plant"].values()) == {"written"} and planter["found"] == ["planted-from-planter"] * 3
    for name in ("victim", "victim-two"):
        _, victim = sandboxed(name, "--look")
        assert victim["found"] == [], f"{name} saw what planter planted"
    # The planter's own next launch finds its cache warm: its installs are kept, for it alone.
    _, again = sandboxed("planter", "--plant", "from-planter", "--look")
    assert again["found"] == ["planted-from-planter"] * 3
    cache = sandbox.server_cache("planter", fixture_command("sandbox_probe", "--plant", "from-planter", "--look"))
    planted = list(own_cache.rglob("planted-*"))
    assert len(planted) == 3 and all(cache in p.parents for p in planted), planted


def test_a_changed_command_does_not_inherit_the_old_cache(own_cache):
    sandboxed("same-name", "--plant", "old-command")
    _, changed = sandboxed("same-name", "--look")
    assert changed["found"] == []


# --- host secrets are not in the sandbox ----------------------------------------------------------

def test_host_secret_files_are_hidden(own_cache):
    readable_here = {}
    for path in list(sandbox.SECRET_FILES) + ["/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_rsa_key"]:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        if data:
            readable_here[path] = hashlib.sha256(data).hexdigest()
    assert "/etc/shadow" in readable_here or os.geteuid() != 0, "the probe needs /etc/shadow to exist"
    listed = [d for d in sandbox.SECRET_DIRS if os.path.isdir(d)]
    flags = [f for path in ["/etc/shadow", "/etc/gshadow", *readable_here] for f in ("--read", path)]
    _, seen = sandboxed("secrets", *flags, "--read", "/etc/passwd", *[f for d in listed for f in ("--list", d)])
    for path in ["/etc/shadow", "/etc/gshadow", *readable_here]:
        got = seen["read"][path]
        assert isinstance(got, str) or got["size"] == 0, f"{path} readable inside: {got}"
    assert isinstance(seen["read"]["/etc/passwd"], dict) and seen["read"]["/etc/passwd"]["size"] > 0  # /etc is there
    for directory in listed:
        assert seen["list"][directory] == [] or str(seen["list"][directory]).startswith("error:"), directory
