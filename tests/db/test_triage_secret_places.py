"""A place that is itself a secret — a key, certificate or identity file, a service account, a signed
webhook URL — is a credential, never a setting: triage does not say ``needs-setting`` for it and the probe
reads such a declared name as a credential. A package that crashed on its own code is broken whatever
place its words also ask for."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness.db import importer
from harness.db.import_sources import Candidate
from harness.db.importer import Proposal
from harness.probe import status as st
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target
from tests.conftest import fixture_command


def _record(notes):
    return {"status": "startup-failure", "notes": list(notes), "toolCount": None, "totalTokens": None}


@pytest.mark.parametrize("name", [
    "SSH_IDENTITY_FILE", "SERVICE_ACCOUNT_FILE", "GOOGLE_SERVICE_ACCOUNT_PATH", "CLIENT_CERT_FILE", "PRIVATE_PEM_PATH",
    "KUBECONFIG_PATH", "NETRC_FILE", "PASSPHRASE_FILE", "JWT_FILE", "PGPASS_FILE", "SLACK_WEBHOOK_URL", "SENTRY_DSN_URL",
    "ID_RSA_PATH", "SIGNING_CERT_PATH", "API_URL_TOKEN", "SECRET_PATH", "GH_PAT_FILE", "\u017fECRET_PATH",
])
def test_a_secret_s_place_is_no_place(name):
    assert not st.location_name(name)


@pytest.mark.parametrize("name", ["ALLOWED_DIR", "DATABASE_URL", "OLLAMA_HOST", "ROLLBAR_CONFIG_FILE", "SEARCH_PATHS"])
def test_a_place_stays_a_place(name):
    assert st.location_name(name)


@pytest.mark.parametrize("said", [
    "Error: SSH_IDENTITY_FILE is required",
    "Error: SERVICE_ACCOUNT_FILE is required",
    "Missing CLIENT_CERT_FILE",
    "Missing required: path to the .pem private key",
    "Please set the JWT file path",
    "Missing webhook URL",
    "Please set SLACK_WEBHOOK_URL",
    "Error: the kubeconfig path is required",
    "Error: the token file path is required",  # as a password file or an API key file
    "Please set the secrets file",
])
def test_a_secret_s_place_asked_for_is_no_setting(said):
    assert importer.classify(_record([f"stderr ends: '{said}'"]), None)[0] != importer.NEEDS_SETTING


@pytest.mark.parametrize("notes", [
    ["stderr ends: \"Error: Cannot find module '/app/dist/index.js'\"", "a config file is required"],
    ["Traceback: ModuleNotFoundError: No module named 'acme'; Please set WORKSPACE_ROOT"],
    ["SyntaxError: Unexpected identifier; ALLOWED_DIR is required"],
])
def test_a_crash_of_the_package_s_own_is_broken_whatever_it_asks(notes):
    assert importer.classify(_record(notes), None)[0] == importer.BROKEN


@pytest.mark.parametrize("env, said", [
    (("SSH_IDENTITY_FILE",), "Error: SSH_IDENTITY_FILE not found"),
    (("SLACK_WEBHOOK_URL",), "Error: SLACK_WEBHOOK_URL is invalid"),
    (("SERVICE_ACCOUNT_PATH",), "Error: SERVICE_ACCOUNT_PATH is not set"),
])
def test_the_probe_reads_a_declared_secret_s_place_as_a_credential(env, said):
    target = Target(name="x", command="npx -y x@1.0.0", env=env)
    capture = Capture("1.0.0", phase="initialize", stderr_tail=said + "\n", exit_code=1,
                      failure=Failure("exited", "initialize", "the server exited before replying", exit_code=1))
    assert st.classify(target, capture).status == st.AUTH_REQUIRED


def test_a_long_ask_is_read_in_linear_time():
    text = "Missing " + "A_" * 50_000 + " path is required " + "x/" * 50_000
    started = time.process_time()
    importer.setting_asked(text)
    st.names_credential(text)
    assert time.process_time() - started < 2.0


@pytest.mark.parametrize("tail", ["'" * 100_000, "' " * 50_000, " " * 100_000])
def test_a_credential_followed_by_a_long_run_of_quotes_is_read_in_linear_time(tail):
    started = time.process_time()
    assert not st.is_credential("the password" + tail + "x")
    assert st.is_credential("the password" + tail)
    assert time.process_time() - started < 2.0  # quotes then quotes or spaces at the end took 40 s


def test_triage_of_real_servers_asking_for_a_secret_s_place(monkeypatch):
    monkeypatch.setenv("MCP_CONTEXT_COST_CONFIRMATION", "after")
    props = [Proposal(Candidate("npm", "a"), {"name": "identity", "command": fixture_command("claims_machine_fault"),
                                              "setEnv": {"CLAIM": "Error: SSH_IDENTITY_FILE is required"}}),
             Proposal(Candidate("npm", "b"), {"name": "crash", "command": fixture_command("claims_machine_fault"),
                                              "setEnv": {"CLAIM": "Error: a config file is required\\n"
                                                                  "Error: Cannot find module './dist/server.js'"}}),
             Proposal(Candidate("npm", "c"), {"name": "place", "command": fixture_command("claims_machine_fault"),
                                              "setEnv": {"CLAIM": "Error: a directory argument is required"}})]
    asyncio.run(importer.triage(props, "host", concurrency=2, timeout_seconds=20))
    identity, crash, place = props
    assert identity.outcome != importer.NEEDS_SETTING, identity.evidence
    assert crash.outcome == importer.BROKEN, crash.evidence
    assert place.outcome == importer.NEEDS_SETTING, place.evidence
