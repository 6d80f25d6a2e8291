"""Path inputs stay inside GITHUB_WORKSPACE and file inputs are read bounded and regular-only:
``..``, absolute paths elsewhere and symbolic links pointing out are refused naming the input; a
device, a FIFO, a directory or an oversized file is refused before a byte is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.action.comparison import BaselineError, load
from harness.action.inputs import InputError, read
from harness.audit.readers import MAX_CONFIG_BYTES
from harness.util.bounded import MAX_RECORD_BYTES
from tests.action.conftest import input_env
from tests.conftest import fixture_command


@pytest.fixture
def places(tmp_path):
    """A workspace with a subfolder, a config and a record, and a folder outside it."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.json").write_text('{"servers": {}}')
    (workspace / ".mcp.json").write_text('{"mcpServers": {}}')
    (workspace / "sub" / ".mcp.json").write_text('{"mcpServers": {}}')
    os.mkfifo(workspace / "fifo")
    (workspace / "huge.json").touch()
    os.truncate(workspace / "huge.json", MAX_RECORD_BYTES + 1)  # sparse: no disk used
    (workspace / "big-config.json").touch()
    os.truncate(workspace / "big-config.json", MAX_CONFIG_BYTES + 1)
    (workspace / "out-link").symlink_to(outside)
    (workspace / "secret-link.json").symlink_to(outside / "secret.json")
    (workspace / "zero-link").symlink_to("/dev/zero")
    (workspace / "inside-link").symlink_to(workspace / "sub")
    return workspace, outside


def problems(workspace: Path, **inputs: str) -> list[str]:
    environ = {"GITHUB_WORKSPACE": str(workspace)} | input_env({k.replace("_", "-"): v for k, v in inputs.items()})
    if "config" not in inputs:
        environ.setdefault("INPUT_COMMAND", "server")
    try:
        read(environ)
    except InputError as exc:
        return exc.problems
    return []


def only(found: list[str], label: str, words: str) -> None:
    assert len(found) == 1, found
    assert found[0].startswith(f"input '{label}' ") and words in found[0], found


@pytest.mark.parametrize("value", ["../outside", "/", "sub/../../outside", "out-link", "out-link/.",
                                   "inside-link/../../outside"])
def test_working_directory_outside_is_refused(places, value):
    workspace, _ = places
    only(problems(workspace, working_directory=value), "working-directory", "resolves outside the workspace")


@pytest.mark.parametrize("value", ["sub", "./sub/", "inside-link", "{ws}/sub"])
def test_working_directory_inside_is_accepted(places, value):
    workspace, _ = places
    assert problems(workspace, working_directory=value.format(ws=workspace)) == []


@pytest.mark.parametrize("value", ["../badge.json", "/tmp/badge.json", "out-link/badge.json", "secret-link.json",
                                   "sub/../../badge.json", "{outside}/b.json", "/dev/null"])
def test_badge_path_outside_is_refused(places, value):
    workspace, outside = places
    only(problems(workspace, badge_path=value.format(outside=outside)), "badge-path", "resolves outside the workspace")


@pytest.mark.parametrize("value, words", [("sub", "a directory"), ("fifo", "a FIFO"),
                                          (".git/hooks/pre-commit", "inside a .git folder"),
                                          ("sub/../.git/config", "inside a .git folder")])
def test_badge_path_that_is_not_a_file_is_refused(places, value, words):
    workspace, _ = places
    only(problems(workspace, badge_path=value), "badge-path", words)


@pytest.mark.parametrize("value", ["../../../../etc/hostname", "/etc/hostname", "secret-link.json",
                                   "out-link/secret.json", "zero-link"])
def test_config_outside_is_refused(places, value):
    workspace, _ = places
    only(problems(workspace, config=f".mcp.json\n{value}"), "config", "resolves outside the workspace")


@pytest.mark.parametrize("value, words", [("fifo", "a FIFO"), ("sub", "a directory"), ("big-config.json", "limit"),
                                          ("missing.json", "does not exist")])
def test_config_that_is_not_a_bounded_regular_file_is_refused(places, value, words):
    workspace, _ = places
    only(problems(workspace, config=value), "config", words)


def test_config_relative_to_a_working_directory_inside(places):
    workspace, _ = places
    assert problems(workspace, config=".mcp.json", working_directory="sub") == []
    only(problems(workspace, config="../../outside/secret.json", working_directory="sub"), "config",
         "resolves outside")


@pytest.mark.parametrize("value, words", [
    ("/dev/zero", "resolves outside"), ("zero-link", "resolves outside"),
    ("../outside/secret.json", "resolves outside"),
    ("fifo", "a FIFO"), ("sub", "a directory"), ("huge.json", "limit"),
])
def test_baseline_outside_or_not_a_bounded_regular_file_is_refused(places, value, words):
    workspace, _ = places
    only(problems(workspace, baseline=value), "baseline", words)


@pytest.mark.parametrize("source", ["index", "tool-shape"])
@pytest.mark.parametrize("value, words", [("../outside/secret.json", "resolves outside"), ("fifo", "a FIFO"),
                                          ("/etc/hostname", "resolves outside")])
def test_published_sources_outside_or_not_regular_are_refused(places, source, value, words):
    workspace, _ = places
    found = problems(workspace, config=".mcp.json", **{source.replace("-", "_"): value})
    only(found, source, words)


@pytest.mark.parametrize("link", [".mcp-context-cost", ".mcp-context-cost/results", ".mcp-context-cost/badges"])
def test_an_output_folder_holding_a_link_is_refused(places, link):
    workspace, outside = places
    target = workspace / link
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside)
    found = problems(workspace)
    assert any("holds a symbolic link" in p for p in found), found


@pytest.mark.parametrize("path", ["/dev/zero", "fifo", "huge.json"])
def test_the_baseline_reader_itself_is_bounded_and_regular_only(places, path):
    workspace, _ = places
    with pytest.raises(BaselineError, match="cannot be read"):
        load(workspace / path if not path.startswith("/") else Path(path))


@pytest.mark.parametrize("inputs, label", [
    ({"baseline": "/dev/zero"}, "baseline"),
    ({"working-directory": "../outside"}, "working-directory"),
    ({"badge-path": "../../badge.json"}, "badge-path"),
])
def test_the_action_refuses_in_one_line_and_still_writes_outputs(run_action, inputs, label):
    run = run_action({"command": fixture_command("well_behaved"), "name": "demo"} | inputs, timeout=60)
    assert run.code == 1
    [error] = run.errors()
    assert error.startswith(f"::error title=invalid input::input '{label}' ")
    assert run.outputs["status"] == "error" and run.outputs["measurement-path"] == ""
    assert not (run.workspace.parent / "badge.json").exists()


@pytest.mark.parametrize("value, words", [("../outside", "resolves outside"), ("/tmp", "resolves outside"),
                                          ("out-link", "resolves outside"), (".mcp.json", "not a directory")])
def test_comment_from_outside_or_not_a_folder_is_refused(places, value, words):
    workspace, _ = places
    found = problems(workspace, comment_from=value)
    assert any(p.startswith("input 'comment-from' ") and words in p for p in found), found


@pytest.mark.parametrize("value", ["--upload-pack=evil", "main..evil", "a b", "$(id)"])
def test_base_that_is_not_a_commit_is_refused(places, value):
    workspace, _ = places
    only(problems(workspace, base=value), "base", "must be auto, none or a commit")
