"""Which host paths a sandboxed server reaches — directly, or through the harness acting on a path
it was given.

Three ways in, each tried by several instances:

* a catalog command naming a host file by absolute path (``… --db-path /tmp/test.db``) must not get
  that file or its folder shown to the sandbox;
* a working directory from a client config (Gemini CLI's and Codex's ``cwd: /``) must not be bound,
  least of all writable;
* the repair before a retry must not remove a host directory a server names through a link it
  planted in its own cache (``~/.npm/x/.npm/_npx/<hex>``) or through ``~/.npm/../../…``.

Each test checks the host afterwards: the file not read, nothing written, the directory still there.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.jsparse import parse
from harness.probe import sandbox
from harness.probe.measure import measure_sync
from harness.probe.target import Target
from tests.audit.conftest import run_audit
from tests.conftest import FIXTURE_DIRS, REPO, fixture_command

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing: scripts/setup.sh installs it")

SECRET = "host-only-text-7Qm2Vx9Lp4Zr"
# Reads the file named by its argument and fails with what it saw: the stderr tail says which.
READER = "import sys; sys.exit('saw: ' + open(sys.argv[1]).read().splitlines()[0])"


@pytest.fixture(autouse=True)
def nothing_shown_by_the_operator(monkeypatch):
    """What is shown here is what each target vouches for, nothing the suite shows to all."""
    monkeypatch.delenv(sandbox.SHOWN_VARIABLE, raising=False)


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def host_file(tmp_path) -> Path:
    folder = tmp_path / "host-folder"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder / "secret.txt"


def probe(measurement) -> dict:
    assert measurement.status == "measured", measurement.notes
    tool = next(t for t in measurement.capture.tools if t["name"] == "probe")
    return parse(tool["description"].removeprefix("PROBE "))


# --- a file named in a catalog command ------------------------------------------------------------

def _host_pid1_name() -> str:
    return Path("/proc/1/status").read_text().splitlines()[0].split(None, 1)[1]  # "Name:\tsystemd"


def _catalog_reads(path: Path, tmp_path: Path) -> tuple[str, str]:
    """Measure a catalog entry that reads ``path`` under the sandbox; (record text, CLI output)."""
    catalog = tmp_path / "servers.yaml"
    command = shlex.join(["python3", "-c", READER, str(path)])
    catalog.write_text(f"servers:\n  - name: names-a-file\n    command: {json.dumps(command)}\n")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "measure", "--server", "names-a-file", "--catalog",
                           str(catalog), "--isolation", "sandbox", "--single"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    # --server publishes into the repository holding --catalog
    record = (tmp_path / "results" / "names-a-file" / "measurement.json").read_text()
    assert json.loads(record)["status"] == "startup-failure", done.stdout + done.stderr
    return record, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("where", ["host-temp-file", "checkout-file", "host-proc-1"])
def test_a_host_file_a_catalog_command_names_is_not_shown(where, host_file, tmp_path, own_cache):
    path, seen_on_host = {
        "host-temp-file": (host_file, SECRET),
        "checkout-file": (REPO / "pyproject.toml", (REPO / "pyproject.toml").read_text().splitlines()[0]),
        "host-proc-1": (Path("/proc/1/status"), _host_pid1_name()),
    }[where]
    if where == "host-proc-1" and "bwrap" in seen_on_host:
        pytest.skip("host pid 1 is itself bubblewrap: nothing tells the two apart")
    record, output = _catalog_reads(path, tmp_path)
    assert seen_on_host not in record and seen_on_host not in output, "the host file was read"
    if where != "host-proc-1":
        assert "No such file or directory" in record, record


@pytest.mark.slow
def test_the_person_running_the_harness_can_show_a_directory(host_file, tmp_path, own_cache, monkeypatch):
    monkeypatch.setenv(sandbox.SHOWN_VARIABLE, str(host_file.parent))
    record, _ = _catalog_reads(host_file, tmp_path)
    assert f"saw: {SECRET}" in record


def test_only_the_directories_a_target_vouches_for_are_shown(host_file, own_cache):
    m = measure_sync(Target(name="vouched", command=fixture_command(
        "sandbox_probe", "--read", str(host_file), "--list", str(host_file.parent), "--list", "/tmp",
        "--read", str(REPO / "pyproject.toml"), "--read", str(FIXTURE_DIRS[0] + "/_mcp.py")),
        host_dirs=FIXTURE_DIRS, timeout_seconds=30), isolation="sandbox", dual=False)
    seen = probe(m)
    assert str(seen["read"][str(host_file)]).startswith("error:"), seen["read"]
    assert str(seen["list"][str(host_file.parent)]).startswith("error:")
    assert str(seen["read"][str(REPO / "pyproject.toml")]).startswith("error:"), "the checkout is shown"
    assert seen["read"][FIXTURE_DIRS[0] + "/_mcp.py"]["size"] > 0  # the vouched folder is
    assert all(not name.startswith("pytest") for name in seen["list"]["/tmp"]), seen["list"]["/tmp"]


def test_a_shown_directory_is_read_only_and_must_exist(own_cache, tmp_path):
    m = measure_sync(Target(name="ro", command=fixture_command("sandbox_probe", "--write", FIXTURE_DIRS[0] + "/planted"),
                            host_dirs=FIXTURE_DIRS, timeout_seconds=30), isolation="sandbox", dual=False)
    assert str(probe(m)["write"][FIXTURE_DIRS[0] + "/planted"]).startswith("error:")
    assert not Path(FIXTURE_DIRS[0], "planted").exists()
    m = measure_sync(Target(name="missing", command=fixture_command("well_behaved"), timeout_seconds=30,
                            host_dirs=(str(tmp_path / "nowhere"),)), isolation="sandbox", dual=False)
    assert m.status == "startup-failure" and "not an existing absolute directory" in m.notes[0]


# --- the working directory ------------------------------------------------------------------------

@pytest.mark.parametrize("cwd", ["/", "host-dir"])
def test_a_working_directory_nobody_vouched_for_is_not_shown(cwd, tmp_path, own_cache):
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    (host_dir / "present").write_text(SECRET)
    where = "/" if cwd == "/" else str(host_dir)
    m = measure_sync(Target(name="cwd", command=fixture_command(
        "sandbox_probe", "--write", "./planted", "--read", "./present", "--list", str(tmp_path), "--list", "/root"),
        cwd=where, host_dirs=FIXTURE_DIRS, timeout_seconds=30), isolation="sandbox", dual=False)
    seen = probe(m)
    assert seen["write"]["./planted"] == "written"  # in the fresh working directory, not on the host
    assert str(seen["read"]["./present"]).startswith("error:")
    assert str(seen["list"][str(tmp_path)]).startswith("error:")
    assert seen["list"]["/root"] in ([], [".pyenv"]) or str(seen["list"]["/root"]).startswith("error:")
    assert sorted(p.name for p in host_dir.iterdir()) == ["present"]
    assert not Path("/planted").exists()


def test_a_vouched_working_directory_is_where_the_server_starts_read_only(tmp_path, own_cache):
    host_dir = tmp_path / "project"
    host_dir.mkdir()
    (host_dir / "present").write_text(SECRET)
    m = measure_sync(Target(name="cwd", command=fixture_command("sandbox_probe", "--write", "./planted",
                                                                "--read", "./present"),
                            cwd=str(host_dir), host_dirs=FIXTURE_DIRS + (str(host_dir),), timeout_seconds=30),
                     isolation="sandbox", dual=False)
    seen = probe(m)
    assert seen["read"]["./present"]["size"] == len(SECRET)
    assert str(seen["write"]["./planted"]).startswith("error:")
    assert sorted(p.name for p in host_dir.iterdir()) == ["present"]


@pytest.mark.slow
def test_an_audit_config_cannot_choose_what_the_sandbox_shows(tmp_path, host_file, own_cache):
    # A project's Gemini CLI settings (a cloned repository's own file) naming a working directory
    # and a host file; the person auditing it asked for the sandbox.
    project, home, target_dir = tmp_path / "project", tmp_path / "home", tmp_path / "its-cwd"
    for folder in (project / ".gemini", home, target_dir):
        folder.mkdir(parents=True)
    code = "import sys; open('planted-by-server', 'w').write('x'); " + READER
    settings = {"mcpServers": {"s": {"command": "python3", "args": ["-c", code, str(host_file)],
                                     "cwd": str(target_dir)}}}
    (project / ".gemini" / "settings.json").write_text(json.dumps(settings))
    # The user trusts the folder in Gemini CLI (their own files), so audit launches the entry.
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    done = run_audit(["--isolation", "sandbox", "--single", "--json", "--timeout", "20"], project, home,
                     env={"MCP_CONTEXT_COST_CACHE": str(own_cache)}, timeout=180)
    assert SECRET not in done.stdout + done.stderr, "the host file was read"
    assert list(target_dir.iterdir()) == [], "the server wrote into the config's working directory"
    row = json.loads(done.stdout)
    assert "No such file or directory" in json.dumps(row), done.stdout[-2000:]


# --- the repair before a retry --------------------------------------------------------------------

def _victim(tmp_path: Path, *parts: str) -> Path:
    victim = tmp_path.joinpath("victim", *parts)
    victim.mkdir(parents=True)
    (victim / "kept").write_text("a host file the harness must not remove\n")
    return victim


def _heal(tmp_path, name: str, *flags: str, isolation: str = "sandbox"):
    command = fixture_command("names_cache_path", *flags)
    m = measure_sync(Target(name=name, command=command, host_dirs=FIXTURE_DIRS, timeout_seconds=30),
                     isolation=isolation, dual=False)
    assert m.status == "startup-failure" and len(m.attempts) == 2, m.notes  # retried: the repair ran
    return m, sandbox.server_cache(name, command) / "npm"


def test_the_repair_does_not_follow_a_link_the_server_planted(tmp_path, own_cache):
    victim = _victim(tmp_path, "0123abcd")
    m, _ = _heal(tmp_path, "via-link", "--link", f"~/.npm/x/.npm/_npx={victim.parent}",
                 "--missing", "/home/mcp/.npm/x/.npm/_npx/0123abcd")
    assert (victim / "kept").exists(), "the harness removed a host directory through the server's link"
    assert not any("removed incomplete npx" in note for note in m.notes)


def test_the_repair_does_not_climb_out_of_the_cache(tmp_path, own_cache):
    victim = _victim(tmp_path, "other-home", ".npm", "_npx", "0123abcd")  # e.g. the user's own ~/.npm
    # ~/.npm is <cache>/sandbox/servers/<name>-<hex>/npm: four levels below the cache root.
    climbing = "/home/mcp/.npm/" + "../" * 4 + os.path.relpath(victim, own_cache)
    _heal(tmp_path, "climbs", "--missing", climbing)
    assert (victim / "kept").exists(), "the harness removed another cache's install named with '..'"


def test_the_repair_still_removes_the_servers_own_incomplete_install(tmp_path, own_cache):
    m, npm = _heal(tmp_path, "own", "--make", "~/.npm/_npx/0123abcd/node_modules",
                   "--missing", "/home/mcp/.npm/_npx/0123abcd")
    assert any("removed incomplete npx install(s) 0123abcd" in note for note in m.notes), m.notes
    assert npm.is_dir()  # only the install, not the cache


def test_in_host_mode_the_repair_follows_no_link_either(tmp_path, own_cache):
    victim = _victim(tmp_path, "0123abcd")
    link = tmp_path / "npm-home" / ".npm"
    link.mkdir(parents=True)
    os.symlink(victim.parent, link / "_npx")
    _heal(tmp_path, "host-link", "--missing", f"{link}/_npx/0123abcd", isolation="host")
    assert (victim / "kept").exists()
