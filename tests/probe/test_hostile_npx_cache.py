"""What a package (its install script, or the server later, both of which can write into their own npx
install) leaves in the cache never makes the harness write outside it, wait, read without bound or
crash: the completion mark is written beside and renamed over whatever stands at its name, and an
install's ``package.json`` is read only as a plain file of bounded size whose dependencies are a map."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.probe import npx_cache

HASH = "0123456789abcdef"


def _install(root: Path) -> Path:
    directory = root / "npm" / "_npx" / HASH
    (directory / "node_modules" / ".bin").mkdir(parents=True)
    (directory / "node_modules" / "dep").mkdir()
    (directory / "node_modules" / "dep" / "package.json").write_text("{}")
    (directory / "package.json").write_text('{"dependencies": {"dep": "1.0.0"}}')
    return directory


def _plant(directory: Path, victim: Path, how: str) -> None:
    marker = directory / npx_cache.MARKER
    if how == "link-to-file":
        marker.symlink_to(victim)
    elif how == "dangling-link":
        marker.symlink_to(victim.parent / "created-outside")
    elif how == "fifo":
        os.mkfifo(marker)
    elif how == "link-to-fifo":
        os.mkfifo(victim.parent / "fifo")
        marker.symlink_to(victim.parent / "fifo")
    elif how == "temporary-link":  # a name the harness could write beside, planted in advance
        (directory / f"{npx_cache.MARKER}.{os.getpid()}.tmp").symlink_to(victim)


@pytest.mark.parametrize("how", ["link-to-file", "dangling-link", "fifo", "link-to-fifo", "temporary-link"])
def test_marking_an_install_never_writes_through_or_waits_on_what_the_package_left(tmp_path, how):
    directory = _install(tmp_path)
    victim = tmp_path / "outside" / "victim"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    _plant(directory, victim, how)
    bin_dir = str(directory / "node_modules" / ".bin")
    if "fifo" in how:  # in a child with a deadline: a fifo would block the write for ever
        code = ("import sys; from pathlib import Path; from harness.probe import npx_cache; "
                "npx_cache.mark_complete(sys.argv[1], 'host', Path(sys.argv[2]))")
        subprocess.run([sys.executable, "-c", code, bin_dir, str(tmp_path / "npm")],
                       check=True, timeout=60, env={**os.environ, "PYTHONPATH": os.getcwd()})
    else:
        npx_cache.mark_complete(bin_dir, "host", tmp_path / "npm")
    assert victim.read_text() == "precious\n" and not (victim.parent / "created-outside").exists()
    marker = directory / npx_cache.MARKER
    assert not marker.is_symlink() and marker.is_file() and npx_cache.marked_complete(directory)
    planted = [f"{npx_cache.MARKER}.{os.getpid()}.tmp"] if how == "temporary-link" else []  # the package's own file
    assert sorted(p.name for p in directory.iterdir()) == sorted([npx_cache.MARKER, "node_modules", "package.json",
                                                                  *planted])


@pytest.mark.parametrize("manifest", ['{"dependencies": 5}', '{"dependencies": ["dep"]}', '{"dependencies": "dep"}',
                                      '[1, 2]', '"text"', "null", '{"dependencies": {"dep": "1"}}' + " " * (2 << 20)])
@pytest.mark.parametrize("exclusive", [True, False], ids=["sandbox", "host"])
def test_a_package_json_npm_never_writes_is_discarded_not_a_crash(tmp_path, manifest, exclusive):
    directory = _install(tmp_path)
    (directory / "package.json").write_text(manifest)
    found = dict((p.name, why) for p, why in npx_cache.incomplete_npx_installs(tmp_path / "npm", exclusive))
    assert found == {HASH: "an unreadable package.json"}
    npx_cache.discard_incomplete(tmp_path / "npm", exclusive)
    assert not directory.exists()


@pytest.mark.parametrize("how", ["link-to-file", "fifo", "directory", "link-to-devzero"])
def test_a_package_json_that_is_no_plain_file_is_never_followed_read_or_waited_on(tmp_path, how):
    directory = _install(tmp_path)
    manifest = directory / "package.json"
    manifest.unlink()
    outside = tmp_path / "outside.json"
    outside.write_text('{"dependencies": {"dep": "1.0.0"}}')
    if how == "link-to-file":
        manifest.symlink_to(outside)
    elif how == "fifo":
        os.mkfifo(manifest)
    elif how == "directory":
        manifest.mkdir()
    else:
        manifest.symlink_to("/dev/zero")
    found = dict((p.name, why) for p, why in npx_cache.incomplete_npx_installs(tmp_path / "npm"))
    assert found == {HASH: "an unreadable package.json"}
    npx_cache.discard_incomplete(tmp_path / "npm")
    assert not directory.exists() and outside.read_text() == '{"dependencies": {"dep": "1.0.0"}}'
