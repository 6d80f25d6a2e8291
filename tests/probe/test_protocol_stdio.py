"""Over stdio, several variants each: cursors (the empty string is a cursor),
reply ids (echoed as strings, or answering nothing), tool lists that arrive late (tools.listChanged)
and servers without tools. Every expected value is node's JSON.stringify over the bytes the fixture
sends (``--dump``), counted with o200k_base."""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from harness.probe import session
from harness.probe.session import SETTLE_QUIET_SECONDS
from harness.probe.target import Target
from tests.conftest import fixture_command
from tests.probe.helpers import measure_and_write, nothing_left, results_root  # noqa: F401
from tests.probe.protocol_helpers import assert_matches, dump, fixture


def measure(results, name: str, script: str, *flags: str, timeout: float = 20, dual: bool = False):
    target = Target(name=name, command=fixture_command(script, *flags), timeout_seconds=timeout)
    return measure_and_write(target, results, dual=dual)


# --- 1. cursors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("cursors,pages,empty_on", [
    ("EMPTY", 2, 1),          # the empty cursor on the first page
    ("a,EMPTY", 3, 2),        # on a middle page
    ("EMPTY,b,c", 4, 1),      # first, with more pages after it
    ("x,y", 3, None),         # ordinary cursors: no note
])
def test_only_an_absent_next_cursor_ends_the_list(cursors, pages, empty_on, results_root):
    expected = dump(fixture("cursor_pages"), "--cursors", cursors)
    assert expected.tools == pages
    run = measure(results_root, f"cursor-{cursors.replace(',', '-').lower()}", "cursor_pages", "--cursors", cursors)
    assert_matches(run.record, expected)
    assert run.measurement.capture.pages == pages
    if empty_on:
        assert f'page {empty_on} of tools/list carried nextCursor ""' in run.notes
    else:
        assert "nextCursor" not in run.notes


def test_a_null_next_cursor_ends_the_list(results_root):
    expected = dump(fixture("cursor_pages"), "--cursors", "EMPTY", "--end-null")
    run = measure(results_root, "cursor-end-null", "cursor_pages", "--cursors", "EMPTY", "--end-null")
    assert_matches(run.record, expected)
    assert expected.tools == 2
    assert 'page 2 of tools/list carried "nextCursor": null; read as the end of the list' in run.notes
    compat = run.record["compatibility"]
    assert compat["summary"].startswith("Claude Code and other TypeScript-SDK clients would reject it (page 2 of "
                                        "tools/list does not match the MCP 2025-11-25 schema: result.nextCursor must "
                                        "be of type string)")
    assert "Python-SDK" not in compat["summary"]  # mcp.types accepts a null nextCursor


@pytest.mark.parametrize("cursor", ["EMPTY", "again"])
def test_the_same_cursor_and_page_forever_loses_no_tool_and_is_a_note(cursor, results_root):
    # A server that answers every cursor with the first page: its whole tool set is known after that
    # page, so the repeat ends the listing with a note (the repeated page not counted), never a failure.
    expected = dump(fixture("cursor_pages"), "--cursors", cursor, "--loop")
    run = measure(results_root, f"cursor-loop-{cursor.lower()}", "cursor_pages", "--cursors", cursor, "--loop")
    assert_matches(run.record, expected)
    shown = "''" if cursor == "EMPTY" else repr(cursor)
    assert (f"nextCursor {shown} repeated: page 2 repeated page 1 (the same tools and the same cursor); the listing "
            "was ended there, the repeated page not counted, and no tool was lost") in run.notes
    assert run.record["phase"] == "done" and expected.tools == 1
    assert all(a["outcome"] == "listed" for a in run.record["attempts"])


# --- 2. reply ids ------------------------------------------------------------------------------------

@pytest.mark.parametrize("where,form,first", [
    ("all", "plain", '1 as "1"'),             # every reply, from initialize on
    ("initialize", "plain", '1 as "1"'),      # only the initialize reply
    ("later", "plain", '3 as "3"'),           # only a later tools/list page
    ("all", "padded", '1 as " 1"'),           # Python int() and JS Number() both read " 1" as 1
    ("later", "fraction", '3 as "3.0"'),      # Number("3.0") is 3
    ("all", "plus", '1 as "+1"'),
])
def test_ids_echoed_as_strings_are_matched_with_a_note(where, form, first, results_root):
    expected = dump(fixture("id_echo"), "--string-ids", where, "--form", form)
    run = measure(results_root, f"ids-{where}-{form}", "id_echo", "--string-ids", where, "--form", form)
    assert_matches(run.record, expected)
    assert f"echoed request id {first}" in run.notes
    assert run.notes.count("echoed request id") == 1  # one note, however many replies did it


def test_replies_to_unknown_ids_are_noise_with_a_sample(results_root):
    expected = dump(fixture("id_echo"), "--string-ids", "none")
    run = measure(results_root, "ids-unknown", "id_echo", "--string-ids", "none", "--unknown")
    assert_matches(run.record, expected)
    capture = run.measurement.capture
    assert capture.noise_lines == 6 and len(capture.noise_sample) == 3  # 2 before each of 3 replies; sample of 3
    assert capture.noise_sample[0] == '{"jsonrpc":"2.0","id":9999,"result":{"tools":[]}}'
    assert '6 repl(ies) answering no request of this client were skipped and counted as noise (first: id 9999)' in run.notes
    assert "echoed request id" not in run.notes


# --- 3. tool lists that arrive late ------------------------------------------------------------------

@pytest.mark.parametrize("notify,initial", [
    ("after-reply", 0),   # registered right after the first (empty) listing
    ("after-reply", 1),   # a few tools first, the rest after
    ("delay", 0),         # registered on a timer, whatever the client does
    ("before", 0),        # notified before the first listing was answered
])
@pytest.mark.slow
def test_list_changed_is_followed_to_the_settled_list(notify, initial, results_root):
    expected = dump(fixture("late_tools"))
    assert expected.tools == 3
    run = measure(results_root, f"late-{notify}-{initial}", "late_tools", "--notify", notify, "--initial", str(initial))
    assert_matches(run.record, expected)
    first = 3 if notify == "before" else initial
    assert re.search(rf"listed 2 times; the list settled within \d+ s of the first listing \({first} → 3 tools\)",
                     run.notes), run.notes


@pytest.mark.parametrize("delay,listed", [
    (0.0, 3),                                 # at once after the reply: followed
    (SETTLE_QUIET_SECONDS / 5, 3),            # inside the quiet window: followed
    (SETTLE_QUIET_SECONDS * 8, 1),            # well after it: the first (non-empty) listing stands
])
def test_a_notification_after_a_listing_with_tools_is_followed_only_inside_the_quiet_window(delay, listed,
                                                                                            results_root):
    expected = dump(fixture("late_tools"), "--tools", str(listed))
    run = measure(results_root, f"late-later-{listed}-{int(delay * 1000)}", "late_tools", "--notify", "later",
                  "--delay", str(delay), "--initial", "1")
    assert_matches(run.record, expected)
    if listed == 3:
        assert "listed 2 times; the list settled within 1 s of the first listing (1 → 3 tools)" in run.notes
    else:
        assert "list_changed" not in run.notes and "listChanged" not in run.notes


@pytest.mark.parametrize("delay,listed", [
    (SETTLE_QUIET_SECONDS / 5, 3),            # inside the window, while this process was held up: still followed
    (SETTLE_QUIET_SECONDS * 8, 1),            # well after it: the window still ends, the first listing stands
])
def test_a_window_this_process_was_held_up_across_is_listened_through(delay, listed, results_root, monkeypatch):
    """The harness's own event loop held up from the window's start to past its end (as by another thread's
    GIL-holding load, or a starved CPU): what the server sent meanwhile is still read."""
    waited = session.Conversation._wait_list_changed

    async def held_up(self, seconds: float, latest: float) -> bool:
        asyncio.get_running_loop().call_soon(time.sleep, SETTLE_QUIET_SECONDS * 3)
        return await waited(self, seconds, latest)

    monkeypatch.setattr(session.Conversation, "_wait_list_changed", held_up)
    expected = dump(fixture("late_tools"), "--tools", str(listed))
    run = measure(results_root, f"late-held-{listed}", "late_tools", "--notify", "later", "--delay", str(delay),
                  "--initial", "1")
    assert_matches(run.record, expected)
    assert ("listed 2 times" in run.notes) == (listed == 3), run.notes


def test_a_server_slow_to_read_does_not_stretch_the_window(results_root):
    """Lines that take long to parse make the window's timer fire late too, but this process was reading, not held
    up: the window is not kept open for them, and a notification seconds later is not followed."""
    expected = dump(fixture("late_tools"), "--tools", "1")
    run = measure(results_root, "late-flood", "late_tools", "--notify", "later", "--delay", str(SETTLE_QUIET_SECONDS * 4),
                  "--initial", "1", "--flood", "20")
    assert_matches(run.record, expected)
    assert "listed 2 times" not in run.notes, run.notes


@pytest.mark.slow
def test_list_changed_never_sent_publishes_zero_after_the_window(results_root):
    run = measure(results_root, "late-never", "late_tools", "--notify", "never")
    rec = run.record
    assert rec["status"] == "measured" and rec["toolCount"] == 0, run.notes
    assert "listed zero tools; no notifications/tools/list_changed came within 5 s, so zero is published" in run.notes
    assert run.measurement.capture.elapsed_seconds >= 5  # the window was waited, not skipped


def test_list_changed_with_tools_and_no_notification_adds_no_note(results_root):
    expected = dump(fixture("late_tools"), "--tools", "2")
    run = measure(results_root, "late-never-2", "late_tools", "--notify", "never", "--initial", "2", "--tools", "2")
    assert_matches(run.record, expected)
    assert "list_changed" not in run.notes and "listChanged" not in run.notes


def test_a_server_that_never_settles_is_bounded(results_root):
    expected = dump(fixture("late_tools"))
    run = measure(results_root, "late-spam", "late_tools", "--notify", "every-list", "--initial", "1")
    assert_matches(run.record, expected)
    assert "notifications/tools/list_changed kept arriving: listed 11 times" in run.notes


def test_without_list_changed_declared_the_first_listing_stands(results_root):
    expected = dump(fixture("late_tools"), "--tools", "1")
    run = measure(results_root, "late-undeclared", "late_tools", "--no-list-changed", "--initial", "1",
                  "--notify", "after-reply")
    assert_matches(run.record, expected)  # the first tool only: the notification promised nothing
    assert expected.tools == 1


@pytest.mark.slow
def test_settled_lists_confirm_as_measured_on_a_second_launch(results_root):
    expected = dump(fixture("late_tools"))
    run = measure(results_root, "late-dual", "late_tools", "--notify", "after-reply", dual=True)
    assert_matches(run.record, expected)
    assert run.record["status"] == "measured" and len(run.measurement.attempts) == 2


# --- 4. servers without tools ------------------------------------------------------------------------

@pytest.mark.parametrize("capabilities", ["resources", "prompts", "logging", "none"])
def test_server_without_tools_capability_is_zero_tools_not_a_failure(capabilities, results_root):
    run = measure(results_root, f"toolless-{capabilities}", "toolless", "--capabilities", capabilities, dual=True)
    rec = run.record
    assert rec["status"] == "measured", run.notes
    assert rec["toolCount"] == 0 and rec["rawToolsCapture"] == [] and rec["declaredToolsCapability"] is False
    assert f"declares no tools capability at initialize (capabilities: {capabilities})" in run.notes
    assert "JSON-RPC error -32601" in run.notes
    assert "answered tools/list with an empty array" not in run.notes
    assert len(run.measurement.attempts) == 2 and all(a.ok for a in run.measurement.attempts)  # no retry


def test_another_error_from_a_tool_less_server_is_still_a_failure(results_root):
    run = measure(results_root, "toolless-internal", "toolless", "--code", "-32603")
    assert run.record["status"] == "startup-failure", run.notes
    assert "JSON-RPC error -32603" in run.notes


def test_method_not_found_with_a_declared_tools_capability_is_a_failure(results_root):
    run = measure(results_root, "tools-not-found", "jsonrpc_error", "--code", "-32601", "--message", "Method not found")
    assert run.record["status"] == "startup-failure", run.notes
