"""A warm install taken from the cache: after one real install of an exact ``npx -y <package>@<version>`` on the
host, a later install with the same inputs starts from what the resolver saw without running npx — only while
the cache still proves that exact package installed complete. Real npm, a real pinned package in an npm cache of
the test's own; every doubt planted in that cache (or in the kept entry) sends the install back to npx.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from harness.probe import build_record, npx_cache, resolve, warm_install, workdir
from harness.probe import install as installing
from harness.probe.measure import measure_sync
from harness.probe.target import Target

SPEC = "@modelcontextprotocol/server-memory@2026.8.31"  # as in tests/probe/test_real_servers.py
MEMORY = f"npx -y {SPEC}"
NAME = "warm-memory"
pytestmark = pytest.mark.slow  # one real install from the registry, shared by the module


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """``(npm cache, target, what the real install resolved)`` after one real install on the host."""
    root = tmp_path_factory.mktemp("warm")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_CONTEXT_COST_CACHE", str(root / "harness"))
        patch.setenv("npm_config_cache", str(root / "npm"))
        target = Target(name=NAME, command=MEMORY, timeout_seconds=120)
        done = asyncio.run(installing.install(target, "host"))
        assert done.target.resolved is not None and not done.failures
        yield root / "npm", target, done.target.resolved


def _ready(target: Target):
    ready = warm_install.ready(target, "host", True, None)
    assert ready is not None
    return ready


def _taken(warm) -> resolve.Resolved | None:
    npm_cache, target, _ = warm
    return warm_install.installed(target, "host", *_ready(target), npm_cache)


def _install_dir(warm) -> Path:
    npm_cache, _, resolved = warm
    found = npx_cache.install_dir(resolved.executable, "host", npm_cache)
    assert found is not None
    return found


def test_a_warm_install_is_taken_from_the_cache_as_npx_resolved_it(warm, monkeypatch):
    npm_cache, target, resolved = warm
    taken = _taken(warm)
    assert taken is not None
    assert (taken.argv, taken.env, taken.executable, taken.version) == \
        (resolved.argv, resolved.env, resolved.executable, resolved.version)

    async def no_npx(*args, **kwargs):
        raise AssertionError("npx ran for an install the cache proves")

    monkeypatch.setattr(resolve, "run_resolution", no_npx)
    again = asyncio.run(installing.install(target, "host"))
    assert again.target.resolved is not None and again.target.resolved.env == resolved.env


def test_a_measurement_from_the_warm_install_is_the_same_as_through_npx(warm, monkeypatch):
    _, target, _ = warm
    records = []
    for once in ("1", "0"):  # from the cache; then through npx at every launch
        monkeypatch.setenv(resolve.SWITCH, once)
        records.append(build_record.build(measure_sync(target, isolation="host")))
    warm_record, through_npx = records
    assert warm_record["status"] == through_npx["status"] == "measured"
    assert warm_record["resolvedPackage"] == {"launcher": "npx", "name": "@modelcontextprotocol/server-memory",
                                              "version": "2026.8.31"}
    assert warm_record["canonicalSha256"] == through_npx["canonicalSha256"]
    assert warm_record["totalTokens"] == through_npx["totalTokens"]


def _edit_json(path: Path, change) -> bytes:
    before = path.read_bytes()
    data = json.loads(before)
    change(data)
    path.write_text(json.dumps(data))
    return before


@pytest.mark.parametrize("doubt", ["no marker", "other procedure", "version differs", "spec differs", "bin missing",
                                   "bin outside the package", "package is a link", "npm is installing",
                                   "a project above the working directory", "dependency missing"])
def test_any_doubt_in_the_cache_sends_the_install_back_to_npx(warm, tmp_path, doubt):
    install = _install_dir(warm)
    package = install / "node_modules" / "@modelcontextprotocol" / "server-memory"
    bin_link = install / "node_modules" / ".bin" / "mcp-server-memory"
    moved = tmp_path / "moved"
    restore = []
    if doubt == "no marker":
        shutil.move(install / npx_cache.MARKER, moved)
        restore.append(lambda: shutil.move(moved, install / npx_cache.MARKER))
    elif doubt == "other procedure":
        text = (install / npx_cache.MARKER).read_bytes()
        (install / npx_cache.MARKER).write_text(f"complete by install procedure {npx_cache.PROCEDURE - 1}\n")
        restore.append(lambda: (install / npx_cache.MARKER).write_bytes(text))
    elif doubt == "version differs":
        text = _edit_json(package / "package.json", lambda d: d.update(version="2026.8.30"))
        restore.append(lambda: (package / "package.json").write_bytes(text))
    elif doubt == "spec differs":
        text = _edit_json(install / "package.json", lambda d: d["_npx"].update(packages=[SPEC + "-rc"]))
        restore.append(lambda: (install / "package.json").write_bytes(text))
    elif doubt == "bin missing":
        target = os.readlink(bin_link)
        bin_link.unlink()
        restore.append(lambda: bin_link.symlink_to(target))
    elif doubt == "bin outside the package":
        target = os.readlink(bin_link)
        outside = tmp_path / "index.js"
        outside.write_text("")
        bin_link.unlink()
        bin_link.symlink_to(outside)
        restore.append(lambda: (bin_link.unlink(), bin_link.symlink_to(target)))
    elif doubt == "package is a link":  # the package's folder points out of the cache, to a copy
        shutil.move(package, moved)
        package.symlink_to(moved)
        restore.append(lambda: (package.unlink(), shutil.move(moved, package)))
    elif doubt == "npm is installing":
        (install / npx_cache.NPM_LOCK).mkdir()
        restore.append(lambda: (install / npx_cache.NPM_LOCK).rmdir())
    elif doubt == "a project above the working directory":  # npm would take it for the project
        above = Path(os.environ["MCP_CONTEXT_COST_CACHE"]) / "package.json"
        above.write_text("{}")
        restore.append(above.unlink)
    elif doubt == "dependency missing":
        dependency = install / "node_modules" / "@modelcontextprotocol" / "sdk"
        shutil.move(dependency, moved)
        restore.append(lambda: shutil.move(moved, dependency))
    try:
        assert _taken(warm) is None
    finally:
        for undo in restore:
            undo()
    assert _taken(warm) is not None  # restored: taken again


@pytest.mark.parametrize("plant", ["garbage", "another key", "a link", "a fifo", "oversized", "another bin",
                                   "another PATH", "another version"])
def test_a_kept_entry_that_does_not_hold_is_never_taken(warm, tmp_path, plant):
    _, target, _ = warm
    how, env = _ready(target)
    path = warm_install._installed_path("host", how, str(workdir.own_path(NAME)))
    kept = path.read_bytes()
    entry = json.loads(kept)
    path.unlink()
    if plant == "garbage":
        path.write_bytes(b"\x00not json")
    elif plant == "another key":
        path.write_text(json.dumps({**entry, "key": "0" * 64}))
    elif plant == "a link":
        (tmp_path / "entry.json").write_bytes(kept)
        path.symlink_to(tmp_path / "entry.json")
    elif plant == "a fifo":
        os.mkfifo(path)
    elif plant == "oversized":
        path.write_text(json.dumps({**entry, "pad": "x" * warm_install.INSTALLED_BYTES}))
    elif plant == "another bin":  # a program of the install that is not the package's own bin
        path.write_text(json.dumps({**entry, "argv": ["sh", "-c", "'node-which'"]}))
    elif plant == "another PATH":
        env_pairs = [[k, "/tmp/elsewhere:" + v if k == "PATH" else v] for k, v in entry["env"]]
        path.write_text(json.dumps({**entry, "env": env_pairs}))
    elif plant == "another version":
        path.write_text(json.dumps({**entry, "version": "2026.8.30"}))
    try:
        assert _taken(warm) is None
    finally:
        path.unlink()
        path.write_bytes(kept)
    assert _taken(warm) is not None


def test_two_harness_interpreters_keep_an_entry_each(warm, monkeypatch):
    """Another install of the harness (another interpreter: another key) resolving the same launch keeps its own
    entry beside this one's: neither evicts the other, and each is taken from the cache."""
    _, target, _ = warm
    mine = warm_install._installed_path("host", _ready(target)[0], str(workdir.own_path(NAME)))
    with monkeypatch.context() as other:
        other.setattr(resolve, "dumper_digest", lambda: "another-harness0")
        assert _taken(warm) is None  # nothing kept yet for the other interpreter
        theirs = asyncio.run(installing.install(target, "host"))  # runs npx, keeps the other's entry
        assert theirs.target.resolved is not None and not theirs.failures
        assert warm_install._installed_path("host", _ready(target)[0], str(workdir.own_path(NAME))) != mine
        assert _taken(warm) is not None
    assert mine.is_file() and _taken(warm) is not None


def test_what_npm_reads_changing_makes_the_entry_a_miss(warm, tmp_path, monkeypatch):
    """Another npm user config, another environment: npx is asked again."""
    _, target, _ = warm
    config = tmp_path / "npmrc"
    config.write_text("")
    monkeypatch.setenv("npm_config_userconfig", str(config))  # another environment: another key
    assert _taken(warm) is None


def test_only_an_exact_pin_without_declared_values_or_credentials_is_taken_from_the_cache(monkeypatch):
    assert warm_install.ready(Target(name="a", command=MEMORY), "host", True, None) is not None
    for command in ("npx -y @modelcontextprotocol/server-memory", "npx -y @modelcontextprotocol/server-memory@latest",
                    "npx -y @modelcontextprotocol/server-memory@^2026.8.31"):
        assert warm_install.ready(Target(name="a", command=command), "host", True, None) is None
    assert warm_install.ready(Target(name="a", command=MEMORY, env=("API_TOKEN",)), "host", True, None) is None
    assert warm_install.ready(Target(name="a", command=MEMORY), "sandbox", True, None) is None
    monkeypatch.setenv("HTTPS_PROXY", "http://user:secret@proxy.invalid:3128")
    assert warm_install.ready(Target(name="a", command=MEMORY), "host", True, None) is None
