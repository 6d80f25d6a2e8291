"""Every cache the harness keeps lives in one folder, chosen in one place (``util.user_cache``)."""

from __future__ import annotations

import io
import os
import re
import struct
from pathlib import Path

import pytest

from harness.action import main as action_main
from harness.cli import main
from harness.core import tokenizer
from harness.pages import regen_cache
from harness.probe import sandbox, workdir
from harness.util import user_cache

HARNESS = Path(__file__).resolve().parents[2] / "harness"


def _homes() -> list[Path]:
    return [tokenizer.cache_dir(), sandbox.cache_root(), workdir.base_dir(), regen_cache.folder(HARNESS, "pages")]


def test_every_cache_follows_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "chosen"))
    assert all(home.is_relative_to(tmp_path / "chosen") for home in _homes())
    assert len({home for home in _homes()}) == 4


@pytest.mark.parametrize("value", [None, ""])
def test_the_default_is_under_home(value: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))  # not followed: the sweep's cache path names ~/.cache
    if value is None:
        monkeypatch.delenv(user_cache.ENV, raising=False)
    else:
        monkeypatch.setenv(user_cache.ENV, value)
    assert user_cache.root() == tmp_path / ".cache" / "mcp-context-cost"
    assert all(home.is_relative_to(user_cache.root()) for home in _homes())


def test_no_other_module_chooses_a_cache_folder() -> None:
    choosers = sorted(p.relative_to(HARNESS).as_posix() for p in HARNESS.rglob("*.py")
                      if any(("environ" in line and "MCP_CONTEXT_COST_CACHE" in line) or '".cache"' in line
                             for line in p.read_text().splitlines()))
    assert choosers == ["util/user_cache.py"]


@pytest.mark.parametrize("value", ["~", "~/elsewhere"])
def test_a_tilde_is_the_home(value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A value set where no shell expands it (a workflow's env, an env file) still means the home."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(user_cache.ENV, value)
    assert user_cache.root() == tmp_path / value.lstrip("~/")
    assert all(home.is_relative_to(tmp_path) for home in _homes())


@pytest.mark.parametrize("how", ["a file", "under a file", "under /proc"])
def test_an_unusable_cache_is_one_line(how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    value = {"a file": tmp_path / "file", "under a file": tmp_path / "file" / "cache",
             "under /proc": Path("/proc/no-such-folder/cache")}[how]
    monkeypatch.setenv(user_cache.ENV, str(value))
    code = main(["measure", "--command", "npx -y nothing-at-all@1.0.0", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"error: {user_cache.ENV}="), err
    assert str(value) in err and "internal error" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("how", ["a link to a shared folder", "in a shared folder", "another user's folder",
                                 "a folder in it linked to a shared one",
                                 "a folder in it linked to a missing one in a sticky shared folder"])
def test_a_cache_another_user_can_write_is_refused(how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """What the harness runs (the resolver's script, kept launches) and what it counts with are kept in the cache:
    one another user can write or rename is refused, whatever link leads to it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # world-writable, not sticky
    cache = tmp_path / "cache"
    if how == "a link to a shared folder":
        cache.symlink_to(shared, target_is_directory=True)
    elif how == "in a shared folder":
        cache = shared / "cache"
    elif how == "another user's folder":
        cache.mkdir()
        os.chown(cache, 65534, 65534) if os.geteuid() == 0 else pytest.skip("needs root to give a folder away")
    elif how == "a folder in it linked to a shared one":
        cache.mkdir()
        (cache / "resolver").symlink_to(shared, target_is_directory=True)
    else:  # another user can make the missing folder first, and the harness would use theirs
        shared.chmod(0o1777)
        cache.mkdir()
        (cache / "resolver").symlink_to(shared / "not-yet", target_is_directory=True)
    monkeypatch.setenv(user_cache.ENV, str(cache))
    assert main(["measure", "--command", "npx -y nothing-at-all@1.0.0", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {user_cache.ENV}=") and "another user" in err, err


def test_the_action_refuses_a_cache_another_user_can_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The Action measures in its own process, not through the command line: the same check, before any launch."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(user_cache.ENV, str(shared))
    proof = tmp_path / "launched"
    environ = {**os.environ, "GITHUB_WORKSPACE": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path / "output"),
               "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "INPUT_NAME": "x",
               "INPUT_COMMAND": f"sh -c 'touch {proof}'"}
    out = io.StringIO()
    assert action_main.run(environ, out) == 1
    assert "another user" in out.getvalue() and "another user" in (tmp_path / "summary").read_text()
    assert not proof.exists()


def test_a_private_cache_in_a_sticky_shared_folder_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp: another user cannot rename what is not theirs
    monkeypatch.setenv(user_cache.ENV, str(shared / "cache"))
    assert user_cache.problem() is None and (shared / "cache").is_dir()


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL as the kernel stores it: version 2, then (tag, permissions, id) entries."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


@pytest.mark.parametrize("which", ["access", "default"])
def test_a_cache_an_acl_lets_another_user_write_is_refused(which: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The group bits of a folder with an ACL are its mask: a private group there says nothing of who can write."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    owner, nobody, everyone = 0xFFFFFFFF, 65534, 0xFFFFFFFF
    acl = _acl((1, 7, owner), (2, 7, nobody), (4, 5, everyone), (0x10, 7, everyone), (0x20, 0, everyone))
    try:
        os.setxattr(cache, f"system.posix_acl_{which}", acl)
    except OSError:
        pytest.skip("this file system keeps no POSIX ACLs")
    monkeypatch.setattr(user_cache, "_own_group", lambda gid: True)  # the group bits alone would pass
    monkeypatch.setenv(user_cache.ENV, str(cache))
    assert (why := user_cache.problem()) is not None and "another user" in why


def test_a_folder_in_the_cache_linked_to_a_missing_private_one_is_used(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "work").symlink_to(tmp_path / "elsewhere" / "work", target_is_directory=True)
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "cache"))
    assert user_cache.problem() is None


@pytest.mark.parametrize("linked", ["work", "resolver", "sandbox"])
def test_a_folder_holding_a_linked_cache_folder_is_never_shown(linked: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry's working folder, the resolver's script and the package caches stay the harness's own when the
    cache reaches them through a link: the folder holding them is refused as the cache itself is."""
    (tmp_path / "cache").mkdir()
    (tmp_path / "disk" / linked).mkdir(parents=True)
    (tmp_path / "cache" / linked).symlink_to(tmp_path / "disk" / linked, target_is_directory=True)
    monkeypatch.setenv(user_cache.ENV, str(tmp_path / "cache"))
    for shown in (tmp_path / "disk", tmp_path / "disk" / linked):
        with pytest.raises(ValueError, match="holds the harness's own caches"):
            sandbox.checked_dirs([str(shown)])
