"""Hostile caches against the warm install: after one real install of an exact pin, what a package, another
program on the machine or a writer of the caches can change between runs. Each change below would make npx
run something else (or the kept entry say something npx never said): the install must go back to npx."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from harness.probe import install as installing
from harness.probe import npx_cache, warm_install, workdir
from harness.probe.target import Target

SPEC = "@modelcontextprotocol/server-memory@2026.8.31"  # as in tests/probe/test_real_servers.py
MEMORY = f"npx -y {SPEC}"
NAME = "attack-memory"
pytestmark = pytest.mark.slow  # one real install from the registry, shared by the module


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """``(root, npm cache, target, what the real install resolved)``; ``root/early`` leads the PATH, empty."""
    root = tmp_path_factory.mktemp("attack")
    (root / "early").mkdir()
    (root / "npmrc").write_text("")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_CONTEXT_COST_CACHE", str(root / "harness"))
        patch.setenv("npm_config_cache", str(root / "npm"))
        patch.setenv("npm_config_userconfig", str(root / "npmrc"))
        patch.setenv("PATH", f"{root / 'early'}{os.pathsep}{os.environ['PATH']}")
        target = Target(name=NAME, command=MEMORY, timeout_seconds=120)
        done = asyncio.run(installing.install(target, "host"))
        assert done.target.resolved is not None and not done.failures
        yield root, root / "npm", target, done.target.resolved


def _ready(warm):
    ready = warm_install.ready(warm[2], "host", True, None)
    assert ready is not None
    return ready


def _taken(warm):
    return warm_install.installed(warm[2], "host", *_ready(warm), warm[1])


def _install(warm) -> Path:
    _, npm_cache, _, resolved = warm
    found = npx_cache.install_dir(resolved.executable, "host", npm_cache)
    assert found is not None
    return found


def test_a_dependency_linked_out_of_the_install_is_not_taken(warm, tmp_path):
    """The install's own folders stay inside it: a dependency swapped for a link to a copy elsewhere is a doubt."""
    dependency = _install(warm) / "node_modules" / "@modelcontextprotocol" / "sdk"
    moved = tmp_path / "sdk"
    shutil.move(dependency, moved)
    dependency.symlink_to(moved)
    try:
        assert _taken(warm) is None
    finally:
        dependency.unlink()
        shutil.move(moved, dependency)
    assert _taken(warm) is not None


def test_a_bin_linked_to_another_package_of_the_install_is_not_taken(warm):
    install = _install(warm)
    bin_link = install / "node_modules" / ".bin" / "mcp-server-memory"
    kept = os.readlink(bin_link)
    other = next(p for p in (install / "node_modules" / "@modelcontextprotocol" / "sdk").rglob("*.js"))
    bin_link.unlink()
    bin_link.symlink_to(other)
    try:
        assert _taken(warm) is None
    finally:
        bin_link.unlink()
        bin_link.symlink_to(kept)
    assert _taken(warm) is not None


@pytest.mark.parametrize("program", ["node", "npx"])
def test_another_node_or_npx_ahead_on_the_path_is_not_taken(warm, program):
    """A program put in a folder already on the PATH: npx, or the server's ``#!/usr/bin/env node``, would run it."""
    root = warm[0]
    node = root / "early" / program
    node.write_text(f"#!/bin/sh\nexec {shutil.which(program)} \"$@\"\n")
    node.chmod(0o755)
    try:
        assert _taken(warm) is None
    finally:
        node.unlink()
    assert _taken(warm) is not None


def test_the_user_npmrc_edited_between_runs_is_not_taken(warm):
    npmrc = warm[0] / "npmrc"
    before = npmrc.stat()
    npmrc.write_text("registry=https://registry.invalid/\n")
    try:
        assert _taken(warm) is None
    finally:
        npmrc.write_text("")
        os.utime(npmrc, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _taken(warm) is not None


def _entry_path(warm) -> Path:
    _, _, target, _ = warm
    ready = warm_install.ready(target, "host", True, None)
    assert ready is not None
    return warm_install._installed_path("host", ready[0], str(workdir.own_path(NAME)))


@pytest.mark.parametrize("plant", ["a command after the bin", "arguments npx never passed", "a variable npx never set",
                                   "a variable of the host changed", "a folder ahead on the PATH", "another npm",
                                   "another node"])
def test_a_kept_entry_saying_what_npx_never_said_is_not_taken(warm, plant):
    """A writer of the harness's cache edits the kept entry: only what npx handed the server is ever started."""
    path = _entry_path(warm)
    kept = path.read_bytes()
    entry = json.loads(kept)
    if plant == "a command after the bin":
        entry["argv"] = ["sh", "-c", entry["argv"][2] + " && touch /tmp/attack7-owned"]
    elif plant == "arguments npx never passed":
        entry["argv"] = ["sh", "-c", entry["argv"][2] + " --other"]
    elif plant == "a variable npx never set":
        entry["env"] = entry["env"] + [["NODE_OPTIONS", "--require=/tmp/attack7.js"]]
    elif plant == "a variable of the host changed":
        entry["env"] = [[k, "/tmp/elsewhere" if k == "HOME" else v] for k, v in entry["env"]]
    elif plant == "a folder ahead on the PATH":  # where ``sh`` and ``#!/usr/bin/env node`` would be found first
        entry["env"] = [[k, v.replace(os.pathsep, os.pathsep + "/tmp/attack7" + os.pathsep, 1) if k == "PATH" else v]
                        for k, v in entry["env"]]
    elif plant == "another npm":
        entry["env"] = [[k, "/tmp/attack7/npm-cli.js" if k == "npm_execpath" else v] for k, v in entry["env"]]
    elif plant == "another node":
        entry["env"] = [[k, "/tmp/attack7/node" if k == "NODE" else v] for k, v in entry["env"]]
    if plant in ("a folder ahead on the PATH", "another npm", "another node"):  # what npx reads, as they would say
        cwd = str(workdir.own_path(NAME))
        entry["consulted"] = warm_install._consulted(_ready(warm)[1], dict(entry["env"]), cwd)
    path.unlink()
    path.write_text(json.dumps(entry))
    try:
        assert _taken(warm) is None
    finally:
        path.unlink()
        path.write_bytes(kept)
    assert _taken(warm) is not None


def test_a_pin_with_arguments_is_kept_as_npm_quoted_them_and_taken(warm):
    """The kept entry is checked against npm's own quoting of the plan's arguments: a real npx run agrees."""
    _, npm_cache, _, _ = warm
    target = Target(name=NAME + "-args", command=MEMORY + " plain 'a b' \"it's\" '$HOME' '' '~x'",
                    timeout_seconds=120)
    done = asyncio.run(installing.install(target, "host"))
    assert done.target.resolved is not None and not done.failures
    ready = warm_install.ready(target, "host", True, None)
    assert ready is not None
    taken = warm_install.installed(target, "host", *ready, npm_cache)
    assert taken is not None and taken.argv == done.target.resolved.argv


def test_an_entry_naming_a_copy_of_the_install_elsewhere_in_the_cache_is_not_taken(warm):
    """npx looks for an exact pin in one folder of its cache, named by the spec: a copy in another is never its."""
    install = _install(warm)
    copy = install.with_name("0" * 16)
    shutil.copytree(install, copy, symlinks=True)
    path = _entry_path(warm)
    kept = path.read_bytes()
    entry = json.loads(kept.decode().replace(str(install), str(copy)))
    assert entry["bin"].startswith(str(copy))
    path.unlink()
    path.write_text(json.dumps(entry))
    try:
        assert _taken(warm) is None
    finally:
        path.unlink()
        path.write_bytes(kept)
        shutil.rmtree(copy)
    assert _taken(warm) is not None


@pytest.mark.parametrize("kept", ["installed", "package-lock.json"])
def test_json_nested_deeper_than_the_parser_goes_is_not_taken(warm, kept):
    """A kept entry or lockfile the parser cannot descend is a doubt like any unreadable one, never a crash."""
    path = _install(warm) / kept if kept == "package-lock.json" else \
        warm_install._installed_path("host", _ready(warm)[0], str(workdir.own_path(NAME)))
    before = path.read_bytes()
    path.write_text('{"key": ' + "[" * 100_000 + "]" * 100_000 + "}")
    try:
        assert _taken(warm) is None
    finally:
        path.write_bytes(before)
    assert _taken(warm) is not None
