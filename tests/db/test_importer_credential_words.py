"""The importer's triage of what a failing server said: a failure to get a credential needs one, a failure
to get anything else (even something of a credential) does not."""

from __future__ import annotations

import pytest

from harness.db import importer


def _record(status, notes=()):
    return {"status": status, "notes": list(notes), "toolCount": 3, "totalTokens": 100}


@pytest.mark.parametrize("said", [
    "Error: Failed to get the API key",
    "failed to get the access token",
    "Fatal: Failed to get the OAuth token from the environment",
    "Failed to get the client secret; exiting",
    "FAILED TO GET THE BEARER TOKEN",
    "Failed to get your personal access token",
    "Failed to get an API token: none configured",
    "Error: failed to get the ACME_API_KEY value",
    "Error: Failed to get the user's API key from settings",
    "Error: Failed to get the 'OPENAI_API_KEY' environment variable",
    'Error: failed to get "GITHUB_TOKEN" from the environment',
    "Error: Failed to get the `X-Api-Key` header",
    "Error: Failed to retrieve the API key",
    "Error: Could not get the API key",
    "Error: Unable to get API key from the keychain",
    "Error: Failed to obtain access token",
    "Error: failed to load credentials",
    "Error: Couldn't read the client secret",
    "Error: Failed to get API keys",  # more than one, as "failed to load credentials"
    "Error: Could not load the access tokens",
    "Error: Unable to find the client secrets",
    "Error: Failed to obtain OAuth tokens from the environment",
])
def test_failing_to_get_a_credential_needs_one(said):
    outcome, evidence = importer.classify(_record("startup-failure", [f"stderr ends: '{said}'"]), None)
    assert outcome == "needs-credential" and said in evidence


@pytest.mark.parametrize("said", [
    "Failed to get the file list",
    "Failed to get the tools: timeout",
    "failed to get the token count of the prompt",
    "Failed to get the key bindings",
    "Failed to get the page. Check the API key documentation",  # the credential is in another clause
    "Failed to get the config, secret rotation pending",
    "Error: Cannot find module '/app/dist/index.js'; Failed to get the API key",  # a crash of its own
    "Error: Failed to get the password policy from the server",  # something of a credential, not one
    "Error: Failed to get the API key list: connect ECONNREFUSED 127.0.0.1:8080",
    "TypeError: failed to get the password hash function",
    "Error: Failed to get the access token's scopes",
    "Error: Cannot find the config file",
    "Error: Unable to load the password policy",
    "Error: Failed to get the API keys list",
])
def test_failing_to_get_anything_else_is_no_credential(said):
    assert importer.classify(_record("startup-failure", [f"stderr ends: '{said}'"]), None)[0] != "needs-credential"
