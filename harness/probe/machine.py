"""Evidence that a failure belongs to the measuring machine, not to the server (issue #11, item 7).

Some failures say nothing about the server: the package registry or the git host the install
needs does not resolve or refuses the connection, a TLS-intercepting proxy's certificate is not
trusted, or ``uv`` has no managed Python for the package's ``requires-python``. The status stays
what the taxonomy says (a ``startup-failure`` is still one), but the record carries the decisive
line as ``environmentEvidence`` and its note says "environment evidence", so a sweep summary can
count these apart and nobody reads them as the server being broken.

Only the stderr tail is read, and only lines from the package managers' own fetches count: a
server that fails to reach *its own* backend names a host that is not a registry, and that is
evidence about the server.
"""

from __future__ import annotations

import re

# Hosts an install reaches before any server code runs: package registries, git hosts, and where
# uv downloads managed Pythons from (python-build-standalone releases on GitHub).
REGISTRY_HOSTS = ("registry.npmjs.org", "registry.yarnpkg.com", "npm.pkg.github.com", "pypi.org",
                  "pypi.python.org", "files.pythonhosted.org", "github.com", "githubusercontent.com",
                  "gitlab.com", "bitbucket.org", "python-build-standalone")
_HOST = re.compile("|".join(re.escape(h) for h in REGISTRY_HOSTS), re.IGNORECASE)
# Words a resolver, socket or TLS failure is reported with, by npm/node, uv (reqwest), pip and git.
_NETWORK = re.compile(r"getaddrinfo|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH"
                      r"|Could not resolve host|Name or service not known|Temporary failure in name resolution"
                      r"|dns error|failed to lookup address|Connection refused|Network is unreachable"
                      r"|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|unable to get local issuer certificate"
                      r"|CERTIFICATE_VERIFY_FAILED|invalid peer certificate|UnknownIssuer", re.IGNORECASE)
# The package managers' own fetch lines: uv's "Failed to fetch/download: <url>" and npm's "request to
# <url> failed" name the index, registry or Python download they could not reach, whatever its host.
_FETCH = re.compile(r"Failed to (?:fetch|download):? `?https?://|\brequest to https?://\S+ failed")
# npm prints its fetch error's code on a line of its own; every npm fetch is to a registry or git host.
_NPM_CODE = re.compile(r"^npm (?:error|ERR!) code (?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT"
                       r"|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT|SELF_SIGNED_CERT_IN_CHAIN"
                       r"|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\b")
# uv cannot provide an interpreter the package's requires-python accepts.
_NO_PYTHON = re.compile(r"No interpreter found for Python|No download found for request"
                        r"|Python downloads are (?:not allowed|set to .never.)"
                        r"|current Python version \([^)]*\) does not satisfy Python", re.IGNORECASE)
MAX_CHARS = 300


def evidence(stderr_tail: str) -> str | None:
    """The decisive line (stripped, at most ``MAX_CHARS``) showing the machine's network or
    toolchain failed the launch, or ``None``. Preference: a package manager's fetch line, or a line
    naming a registry or git host, that also says how the network failed; else npm's ``code E…``
    line; else such a fetch or registry line in a tail that reports the network failure on another
    line (uv prints each cause below the URL); else uv's missing Python."""
    lines = [line.strip() for line in stderr_tail.splitlines() if line.strip()]
    network_anywhere = any(_NETWORK.search(line) for line in lines)
    for accept in (lambda l: (_FETCH.search(l) or _HOST.search(l)) and _NETWORK.search(l),
                   lambda l: _NPM_CODE.search(l),
                   lambda l: network_anywhere and (_FETCH.search(l) or _HOST.search(l)),
                   lambda l: _NO_PYTHON.search(l)):
        found = next((line for line in lines if accept(line)), None)
        if found:
            return found[:MAX_CHARS]
    return None
