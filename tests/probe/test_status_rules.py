"""The narrow text rules of ``harness.probe.status``: which stderr line is quoted, and which lines
count as asking for a credential. Lines are real ones seen from catalog servers on 2026-11-30."""

from __future__ import annotations

import pytest

from harness.probe import machine_fault
from harness.probe import status as st
from harness.probe.npx_cache import before_retry
from harness.probe.outcome import Capture, Failure
from harness.probe.status import _AUTH_LINE, last_line
from harness.probe.target import Target

NPM_404 = """npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@pulumi%2fmcp-server
npm error 404
npm error 404  The requested resource '@pulumi/mcp-server@latest' could not be found or you do not have permission to access it.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /home/mcp/.npm/_logs/2026-11-30T03_57_57_566Z-debug-0.log
"""


def test_npm_boilerplate_is_skipped_for_the_line_that_says_what_failed():
    assert last_line(NPM_404).startswith("npm error 404  The requested resource '@pulumi/mcp-server@latest'")
    assert last_line("npm error code ENOVERSIONS\nnpm error No versions available for @x/mcp\n"
                     "npm error A complete log of this run can be found in: /x.log") == \
        "npm error No versions available for @x/mcp"


@pytest.mark.parametrize("line, filler", [
    ("npm error 404", True), ("npm ERR! 404", True), ("npm error 404 Note that you can also install from a", True),
    ("npm ERR! 404  tarball, folder, http url, or git url.", True),
    ("npm error 404 Not Found - GET https://registry.npmjs.org/helper", False),
    ("npm error 404  'helper@^1.0.0' is not in this registry.", False),
    ("npm error 403 In most cases you or one of your dependencies are requesting", False),
])
def test_npm_404_filler_is_told_from_the_lines_naming_what_is_missing(line, filler):
    assert bool(machine_fault.NPM_404_FILLER.search(line)) is filler
    assert (last_line(line) is None) is filler  # a filler line is never the one quoted


def test_python_traceback_quotes_the_exception_line():
    tail = "Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'y'\n"
    assert last_line(tail) == "ModuleNotFoundError: No module named 'y'"


def test_no_error_words_falls_back_to_the_last_line():
    assert last_line("starting\nlistening on stdio\n") == "listening on stdio"
    assert last_line("") is None


@pytest.mark.parametrize("line", [
    "Error: OAuth keys file not found. Please place gcp-oauth.keys.json in current directory",
    "Error: BRAVE_API_KEY environment variable is required",
    "Credentials not found. Please run with 'auth' argument first.",
    "Invalid API key provided",
])
def test_credential_lines(line):
    assert _AUTH_LINE.search(line)


@pytest.mark.parametrize("line", [
    "SyntaxError: Unexpected token '<' in JSON at position 0",
    "npm error 404 Not Found - GET https://registry.npmjs.org/pkg",
    "ModuleNotFoundError: No module named 'tokenizers'",
])
def test_lines_that_are_not_about_credentials(line):
    assert not _AUTH_LINE.search(line)


def test_stack_frames_are_not_quoted():
    tail = ("Error: Command failed: /x/bin/slack-mcp-server --transport stdio\n"
            "    at genericNodeError (node:internal/errors:984:15)\n"
            "    at checkExecSyncError (node:child_process:891:11)\n  status: 1,\n\nNode.js v20.20.2\n")
    assert last_line(tail) == "Error: Command failed: /x/bin/slack-mcp-server --transport stdio"


def test_an_incomplete_npx_install_is_removed_before_the_retry(tmp_path):
    npm = tmp_path / "servers" / "x-0123456789abcdef" / "npm"  # the server's own cache (sandbox.server_cache)
    broken = npm / "_npx" / "92668d6008b43da4"
    (broken / "node_modules" / "debug").mkdir(parents=True)
    keep = npm / "_npx" / "0123456789abcdef"
    keep.mkdir()
    tail = ("Error: Cannot find module '/home/mcp/.npm/_npx/92668d6008b43da4/node_modules/debug/src/index.js'. "
            "Please verify that the package.json has a valid \"main\" entry\n")
    assert before_retry(tail, "sandbox") is None  # no cache named: nothing outside it is touched
    note = before_retry(tail, "sandbox", npm)
    assert note and "92668d6008b43da4" in note
    assert not broken.exists() and keep.exists()
    assert before_retry("Error: Cannot find module 'left-pad'", "sandbox") is None
    assert before_retry("Cannot find module '/etc/_npx/92668d6008b43da4/x'", "host") is None  # not an npm cache


@pytest.mark.parametrize("tail", [
    # ESM: the missing package, named by the file of the install that imported it
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@modelcontextprotocol/sdk' imported from "
    "{npx}/node_modules/@modelcontextprotocol/server-memory/dist/index.js\n",
    # ESM: a missing file of a package, quoted, then its importer
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '{npx}/node_modules/zod/v4/index.js' imported from "
    "{npx}/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js\n",
    # ESM: a bare specifier, then the importer in the install
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'ajv/dist/2020' imported from {npx}/node_modules/x/y.js\n"
    "Did you mean to import \"ajv/dist/2020.js\"?\n",
    # CommonJS
    "Error: Cannot find module '{npx}/node_modules/debug/src/index.js'\n",
])
def test_every_wording_of_a_module_missing_from_an_unmarked_install_repairs_it(tmp_path, tail):
    npm = tmp_path / "servers" / "x-0123456789abcdef" / "npm"
    broken = npm / "_npx" / "92668d6008b43da4"
    (broken / "node_modules").mkdir(parents=True)
    inside = "/home/mcp/.npm/_npx/92668d6008b43da4"
    note = before_retry(tail.format(npx=inside), "sandbox", npm)
    assert note and broken.name in note and not broken.exists()


@pytest.mark.parametrize("tail", [
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x' imported from /srv/app/node_modules/y/index.js\n",
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x' imported from /etc/_npx/92668d6008b43da4/a.js\n",
    "Cannot find package 'x' imported from /home/mcp/.npm/_npx/../../etc/92668d6008b43da4/a.js\n",
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'\n",
])
def test_a_missing_module_outside_the_server_s_npx_installs_removes_nothing(tmp_path, tail):
    npm = tmp_path / "npm"
    keep = npm / "_npx" / "92668d6008b43da4"
    (keep / "node_modules").mkdir(parents=True)
    assert before_retry(tail, "sandbox", npm) is None and keep.is_dir()


@pytest.mark.parametrize("said, asks", [
    ("Error: the base URL is required (see https://example.com/docs/api-key-setup)", False),
    ("Error: BASE_URL is missing; docs: https://acme.dev/guides/access-token?ref=cli", False),
    ("Error: API key is required (see https://example.com/docs/setup)", True),
    ("Error: ACME_API_KEY is missing; get one at https://acme.dev/api-keys", True),
])
def test_a_credential_word_in_a_links_address_is_no_ask(said, asks):
    capture = Capture("1.0.0", phase="initialize", stderr_tail=said + "\n", exit_code=1,
                      failure=Failure("exited", "initialize", "the server exited before replying", exit_code=1))
    assert (st.classify(Target(name="x", command="npx -y x@1.0.0"), capture).status == st.AUTH_REQUIRED) is asks
