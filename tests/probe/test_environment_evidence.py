"""Failures that show the measuring machine's own network or toolchain: the status is
``not-measured-here``, the record carries ``environmentEvidence`` (the decisive line, redacted) and
``environmentCause``, and the note says "environment evidence". The end-to-end cases make npm, uv and uv's Python lookup fail
for real, by pointing them at hosts that never resolve (RFC 6761 ``.invalid``)."""

from __future__ import annotations

import pytest

from harness.probe import machine_fault
from harness.probe.target import Target
from tests.probe.helpers import measure_and_write, nothing_left, results_root  # noqa: F401

# Lines as npm 10, uv 0.13 and git print them (captured on this machine, 2026-11-30).
NPM_ENOTFOUND = """npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://registry.npmjs.org/@modelcontextprotocol%2fserver-memory failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org
npm error network This is a problem related to network connectivity.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-30T13_38_24_819Z-debug-0.log
"""
UV_INDEX = """error: Failed to fetch: https://pypi.org/simple/mcp-llms-txt/
  cause: error sending request for url (https://pypi.org/simple/mcp-llms-txt/)
  cause: client error (Connect)
  cause: dns error
  cause: failed to lookup address information: Name or service not known
"""
UV_PYTHON_DOWNLOAD = """error: Failed to download `https://github.com/astral-sh/python-build-standalone/releases/download/20261110/cpython-3.13.18%2B20261110-x86_64-unknown-linux-gnu-install_only_stripped.tar.gz`
  cause: client error (Connect)
  cause: dns error
  cause: failed to lookup address information: Name or service not known
"""
GIT = "fatal: unable to access 'https://github.com/example/server.git/': Could not resolve host: github.com\n"
UV_NO_PYTHON = "error: No interpreter found for Python >=3.13 in managed installations or search path\n"
UV_REQUIRES = ("  × No solution found when resolving tool dependencies:\n  ╰─▶ Because the current Python version (3.11.2) "
               "does not satisfy Python>=3.12 and example-mcp==1.0 depends on Python>=3.12, we can conclude that "
               "example-mcp==1.0 cannot be used.\n")
PROXY_CA = ("npm error code SELF_SIGNED_CERT_IN_CHAIN\nnpm error errno SELF_SIGNED_CERT_IN_CHAIN\n"
            "npm error request to https://registry.npmjs.org/express failed, reason: self-signed certificate in "
            "certificate chain\n")


@pytest.mark.parametrize("tail,line", [
    (NPM_ENOTFOUND, "npm error network request to https://registry.npmjs.org/@modelcontextprotocol%2fserver-memory "
                    "failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org"),
    (UV_INDEX, "error: Failed to fetch: https://pypi.org/simple/mcp-llms-txt/"),
    (UV_PYTHON_DOWNLOAD, UV_PYTHON_DOWNLOAD.splitlines()[0][:machine_fault.MAX_CHARS]),
    (GIT, GIT.strip()),
    (UV_NO_PYTHON, UV_NO_PYTHON.strip()),
    (UV_REQUIRES, UV_REQUIRES.splitlines()[1].strip()[:machine_fault.MAX_CHARS]),
    (PROXY_CA, "npm error code SELF_SIGNED_CERT_IN_CHAIN"),
])
def test_the_decisive_line_is_found(tail, line):
    assert machine_fault.evidence(tail) == line


@pytest.mark.parametrize("tail", [
    "Error: getaddrinfo ENOTFOUND api.example-backend.com\n    at GetAddrInfoReqWrap.onlookup",  # the server's backend
    "SyntaxError: Unexpected token '<' in JSON at position 0\n",
    "Error: BRAVE_API_KEY environment variable is required\n",
    "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@x%2fnope\n",  # a missing package
    "",
])
def test_failures_of_the_server_itself_are_not_environment_evidence(tail):
    assert machine_fault.evidence(tail) is None


def _measure(results, name: str, command: str, *set_env: tuple[str, str]):
    target = Target(name=name, command=command, set_env=set_env, timeout_seconds=60)
    return measure_and_write(target, results, isolation="host")


def _assert_environment(run, fragment: str, cause: str) -> None:
    rec = run.record
    assert rec["status"] == "not-measured-here", run.notes
    assert fragment in rec["environmentEvidence"], rec
    assert rec["environmentCause"] == cause
    assert f"environment evidence (the measuring machine's {machine_fault.CAUSE_LABELS[cause]}, not the server)" in run.notes
    assert rec["environmentEvidence"] in rec["notes"][0]


@pytest.mark.slow
def test_an_npm_registry_that_does_not_resolve(results_root, tmp_path):
    run = _measure(results_root, "env-npm", "npx -y @modelcontextprotocol/server-memory@2025.4.25",
                   ("npm_config_registry", "https://registry.npmjs.invalid/"), ("npm_config_fetch_retries", "0"),
                   ("npm_config_cache", str(tmp_path / "npm")))
    _assert_environment(run, "getaddrinfo ENOTFOUND registry.npmjs.invalid", "dns")


def test_a_python_index_that_does_not_resolve(results_root, tmp_path):
    run = _measure(results_root, "env-uv-index", "uvx mcp-llms-txt==0.2.0",
                   ("UV_INDEX_URL", "https://pypi.invalid/simple"), ("UV_HTTP_RETRIES", "0"),
                   ("UV_CACHE_DIR", str(tmp_path / "uv")))
    _assert_environment(run, "Failed to fetch: https://pypi.invalid/simple/mcp-llms-txt/", "dns")


@pytest.mark.slow
def test_no_python_for_the_requested_version(results_root):
    run = _measure(results_root, "env-uv-python", "uvx --python 3.99 mcp-llms-txt==0.2.0",
                   ("UV_PYTHON_DOWNLOADS", "never"))
    _assert_environment(run, "No interpreter found for Python 3.99", "runtime-version")


def test_a_crash_of_the_server_carries_no_environment_field(results_root):
    from tests.conftest import fixture_command

    run = _measure(results_root, "env-none", fixture_command("unexpected_token"))
    assert run.record["status"] == "startup-failure"
    assert "environmentEvidence" not in run.record and "environment evidence" not in run.notes
