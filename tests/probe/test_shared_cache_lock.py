"""In a cache shared with processes the harness does not own (the host's ``~/.npm``), an npx install
under a lock npm itself would still honour (touched within npm's own 60 s) is left alone, however
long ago its last touch — a loaded machine stalls a live npm for seconds; past npm's own threshold the
lock and the incomplete install it guarded are discarded. The sandbox's cache is the harness's alone:
there every lock is stale."""

from __future__ import annotations

import os
import time

import pytest

from harness.probe import npx_cache


def _busy(tmp_path, age: float):
    directory = tmp_path / "npm" / "_npx" / "0123456789abcdef"
    (directory / "node_modules" / "dep").mkdir(parents=True)  # extracting: no package.json yet
    (directory / npx_cache.NPM_LOCK).mkdir()
    then = time.time() - age
    os.utime(directory / npx_cache.NPM_LOCK, (then, then))
    return directory


@pytest.mark.parametrize("age", [0.0, 6.0, 20.0, 55.0])
def test_an_install_npm_may_still_be_making_on_the_host_is_left_alone(tmp_path, age):
    directory = _busy(tmp_path, age)
    assert npx_cache.discard_incomplete(tmp_path / "npm") == []
    assert (directory / "node_modules" / "dep").is_dir() and (directory / npx_cache.NPM_LOCK).is_dir()


@pytest.mark.parametrize("age", [61.0, 3600.0])
def test_past_npm_s_own_threshold_the_lock_and_its_install_are_discarded(tmp_path, age):
    directory = _busy(tmp_path, age)
    notes = npx_cache.discard_incomplete(tmp_path / "npm")
    assert len(notes) == 1 and "never completed" in notes[0] and not directory.exists()


@pytest.mark.parametrize("age", [0.0, 6.0])
def test_in_the_sandbox_s_own_cache_every_lock_is_stale(tmp_path, age):
    directory = _busy(tmp_path, age)
    npx_cache.discard_incomplete(tmp_path / "npm", exclusive=True)
    assert not directory.exists()
