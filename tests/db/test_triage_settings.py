"""A server that asks for a place — a directory, a path, a file, the URL of a service — asks for a
setting its catalog entry must give, not for a credential: triage says ``needs-setting`` (never
``needs-credential``), and the probe does not read a declared place-named variable being missing or
not found as a credential ask. A clause naming a secret stays a credential ask."""

from __future__ import annotations

import asyncio

import pytest

from harness.db import importer
from harness.db.import_sources import Candidate
from harness.db.importer import Proposal
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target
from tests.conftest import fixture_command


def _record(status, notes):
    return {"status": status, "notes": list(notes), "toolCount": None, "totalTokens": None}


@pytest.mark.parametrize("said", [
    "Error: ALLOWED_DIR is required",
    "Error: a directory argument is required",
    "Usage: server <root-path>: path argument is required",
    "Please set WORKSPACE_ROOT to the project folder",
    "Error: DATABASE_URL environment variable is required",
    "Missing required environment variable: OLLAMA_HOST",
    "You must specify at least one allowed directory",
    "Error: KEYCLOAK_URL is required",
])
def test_a_failure_asking_for_a_place_needs_a_setting(said):
    outcome, evidence = importer.classify(_record("startup-failure", [f"stderr ends: '{said}'"]), None)
    assert outcome == importer.NEEDS_SETTING and "not a credential" in evidence
    assert outcome not in importer.ACCEPTED  # the entry's argument or value is a reviewer's to write


@pytest.mark.parametrize("said", [
    "Error: GITHUB_TOKEN is required",
    "Error: API key file path is required",  # a key file is a credential
    "Please set SIGNOZ_URL and SIGNOZ_TOKEN environment variables",  # a token beside the URL
    "Error: GOOGLE_APPLICATION_CREDENTIALS is required",
])
def test_a_place_beside_a_secret_is_no_setting(said):
    assert importer.classify(_record("startup-failure", [f"stderr ends: '{said}'"]), None)[0] == importer.BROKEN


def test_a_failure_that_asks_for_nothing_stays_broken():
    notes = ["stderr ends: \"Error: ENOENT: no such file or directory, open '/app/config.json'\""]
    assert importer.classify(_record("startup-failure", notes), None)[0] == importer.BROKEN


@pytest.mark.parametrize("name, place", [
    ("ALLOWED_DIR", True), ("ROLLBAR_CONFIG_FILE", True), ("DATABASE_URL", True), ("MCP_WORKSPACE", True),
    ("OLLAMA_HOST", True), ("SEARCH_PATHS", True), ("GOOGLE_KEY_FILE", False), ("CREDENTIALS_PATH", False),
    ("ACME_API_TOKEN", False), ("GITHUB_PAT", False), ("SLACK_BOT_TOKEN", False), ("AUTH_URL", False),
    # a secret word inside another word is none: Keycloak, a monkey, an author, a compass, keywords, a passage
    ("KEYCLOAK_URL", True), ("MONKEY_DIR", True), ("AUTHOR_DIR", True), ("COMPASS_HOST", True),
    ("KEYWORDS_FILE", True), ("PASSAGES_PATH", True), ("AZURE_KEYVAULT_URL", True),
    ("SSH_KEY_PATH", False), ("APIKEY_FILE", False), ("PRIVKEY_PATH", False), ("PASSWORD_FILE", False),
    ("PASSWD_FILE", False), ("KEYFILE_PATH", False), ("OAUTH_URL", False), ("KEYRING_DIR", False),
    ("GPG_KEYS_DIR", False), ("PASSPHRASE_FILE", False), ("AUTHTOKEN_FILE", False), ("GCPKEY_FILE", False),
    ("HOTKEYS_FILE", True), ("TURNKEY_DIR", True),
    # nor a token, secret, cookie or PEM inside another word: a tokenizer, a secretary, a cookiecutter, Pembroke
    ("TOKENIZER_PATH", True), ("HF_TOKENIZER_DIR", True), ("SECRETARY_DIR", True), ("COOKIECUTTER_DIR", True),
    ("PEMBROKE_HOST", True), ("TOKENS_FILE", False), ("ACCESSTOKEN_PATH", False), ("SECRETS_DIR", False),
    ("CLIENT_SECRET_FILE", False), ("COOKIE_FILE", False), ("PEM_PATH", False), ("TOKEN_URL", False),
])
def test_which_declared_names_are_places(name, place):
    assert st.location_name(name) is place


@pytest.mark.parametrize("env, said, status", [
    (("ROLLBAR_ACCESS_TOKEN", "ROLLBAR_CONFIG_FILE"),
     'Error: ROLLBAR_CONFIG_FILE="mcp-context-cost-dummy-rollbar_config_file" was not found.', st.STARTUP_FAILURE),
    (("ALLOWED_DIR",), "Error: ALLOWED_DIR is required", st.STARTUP_FAILURE),
    (("ALLOWED_DIR",), "Error: ALLOWED_DIR must be set to a directory", st.STARTUP_FAILURE),
    (("ACME_API_TOKEN",), "Error: ACME_API_TOKEN is invalid", st.AUTH_REQUIRED),
    (("GOOGLE_KEY_FILE",), "Error: GOOGLE_KEY_FILE not found", st.AUTH_REQUIRED),
])
def test_the_probe_reads_a_declared_place_as_no_credential(env, said, status):
    target = Target(name="x", command="npx -y x@1.0.0", env=env)
    capture = Capture("1.0.0", phase="initialize", stderr_tail=said + "\n", exit_code=1,
                      failure=Failure("exited", "initialize", "the server exited before replying", exit_code=1))
    assert st.classify(target, capture).status == status


def test_triage_of_real_servers_asking_for_a_place_or_a_secret(monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CONFIRMATION", "after")
    props = [Proposal(Candidate("npm", "b"), {"name": "place", "command": fixture_command("claims_machine_fault"),
                                              "setEnv": {"CLAIM": "Error: a directory argument is required"}}),
             Proposal(Candidate("npm", "c"), {"name": "token", "command": fixture_command("needs_named_variable",
                                                                                          "ACME_API_TOKEN")}),
             Proposal(Candidate("npm", "d"), {"name": "url", "command": fixture_command("needs_named_variable",
                                                                                        "METABASE_URL")})]
    asyncio.run(importer.triage(props, "host", concurrency=2, timeout_seconds=20))
    place, token, url = props
    assert place.outcome == importer.NEEDS_SETTING and "directory argument is required" in place.evidence
    # a variable it asks for is given a dummy, as every declared name is: with it, each lists its tools
    assert token.outcome == importer.LISTS_TOOLS and token.entry["env"] == ["ACME_API_TOKEN"]
    assert url.outcome == importer.LISTS_TOOLS and url.entry["env"] == ["METABASE_URL"]


@pytest.mark.parametrize("text, variables, place", [
    ("a directory argument is required", (), True),
    ("allowed directories are required", (), True),
    ("Please set the project Folder", (), True),
    ("search paths are missing", (), True),
    ("a config file is required", (), True),
    ("the workspace must be set", (), True),
    ("the root is required", (), True),
    ("the service URL is required", (), True),
    ("URIs must be provided", (), True),
    ("the endpoint is missing", (), True),
    ("hostname is required", (), True),
    ("the port is not set", (), True),
    ("ALLOWED_DIR is required", ("ALLOWED_DIR",), True),
    ("OLLAMA_HOST is required", ("OLLAMA_HOST",), True),
    ("the API key file path is required", (), False),  # a key file is a credential
    ("Please set SIGNOZ_URL and SIGNOZ_TOKEN", ("SIGNOZ_URL", "SIGNOZ_TOKEN"), False),  # a token beside the URL
    ("the kubeconfig path is required", (), False),
    ("Missing webhook URL", (), False),
    ("SSH_IDENTITY_FILE is required", ("SSH_IDENTITY_FILE",), False),
    ("AUTH_URL is required", ("AUTH_URL",), False),
    ("a profile name is required", (), False),  # no place word: "profile", "portable", "rooted" are none
    ("a portable build is required", (), False),
    ("rooted devices are not supported", (), False),
    ("MODEL_NAME is required", ("MODEL_NAME",), False),
])
def test_a_place_is_told_from_a_secret(text, variables, place):
    assert st.names_place(text, variables) is place
