"""The resolution run's script shell stands in for the server's start only: npm hands the same
shell every dependency's install script, and those run for real (a native module's build, a
postinstall download), so an install resolved once is the install a user gets. Real npm, a temp
project depending on local fixture packages."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from harness.probe import resolve


def _project(tmp_path, scripts: dict[str, str]):
    package = tmp_path / "project" / "dep"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "dep-fixture", "version": "1.0.0", "scripts": scripts}))
    (tmp_path / "project" / "package.json").write_text(json.dumps({"name": "p", "version": "1.0.0",
                                                                   "dependencies": {"dep-fixture": "file:dep"}}))
    return tmp_path / "project"


def _install(project, cache) -> subprocess.CompletedProcess:
    env = {**os.environ, resolve.SCRIPT_SHELL: str(resolve._dumper_dir() / "dump"), resolve.FOREGROUND_SCRIPTS: "true"}
    return subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--install-links", f"--cache={cache}"],
                          cwd=project, capture_output=True, text=True, timeout=120, env=env)


# Each is a real npm install: one event in the fast loop, all three in the full suite.
@pytest.mark.parametrize("event", ["preinstall", *(pytest.param(e, marks=pytest.mark.slow) for e in ["install", "postinstall"])])
def test_a_dependency_s_install_script_runs_under_the_resolution_shell(tmp_path, monkeypatch, event):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "harness-cache"))
    marker = tmp_path / f"{event}-ran"
    project = _project(tmp_path, {event: f"echo \"$npm_lifecycle_event\" > {marker} && test -n \"$PATH\""})
    done = _install(project, tmp_path / "npm-cache")
    assert done.returncode == 0, done.stderr
    assert marker.read_text().strip() == event


def test_a_failing_install_script_fails_the_install_with_its_own_words(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "harness-cache"))
    project = _project(tmp_path, {"install": "echo 'prebuild-install warn install getaddrinfo ENOTFOUND github.com' >&2;"
                                             " exit 7"})
    done = _install(project, tmp_path / "npm-cache")
    assert done.returncode != 0
    assert "ENOTFOUND github.com" in done.stderr


def test_the_server_s_own_start_is_still_dumped(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CACHE", str(tmp_path / "harness-cache"))
    dump = resolve._dumper_dir() / "dump"
    out = subprocess.run([str(dump), "-c", "some-server --flag"], capture_output=True, text=True, timeout=30,
                         env={"PATH": os.environ["PATH"], "npm_lifecycle_event": "npx"})
    said = json.loads(out.stdout)
    assert said["argv"] == ["-c", "some-server --flag"]


@pytest.mark.parametrize("added, kept", [((resolve.FOREGROUND_SCRIPTS,), False), ((), True)])
def test_the_server_does_not_see_the_settings_the_resolution_added(added, kept):
    printed = json.dumps({"argv": ["-c", "srv"], "versions": {"srv": "1.0.0"}, "bin": "/x/node_modules/.bin",
                          "env": [["PATH", "/usr/bin"], [resolve.SCRIPT_SHELL, "/d/dump"],
                                  [resolve.FOREGROUND_SCRIPTS, "true"]]}).encode()
    found = resolve._read(resolve.plan("npx -y srv@1.0.0"), printed, "host", added)
    names = [name for name, _ in found.env]
    assert resolve.SCRIPT_SHELL not in names and (resolve.FOREGROUND_SCRIPTS in names) == kept
