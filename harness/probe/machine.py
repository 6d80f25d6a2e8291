"""Evidence that a failure is the measuring machine's (DNS, runtime, download, registry, cache lock).
docs/METHODOLOGY.md, "Statuses".
"""

from __future__ import annotations

import re

# Hosts an install reaches before any server code runs: package registries, git hosts, and where
# uv downloads managed Pythons from (python-build-standalone releases on GitHub).
REGISTRY_HOSTS = ("registry.npmjs.org", "registry.yarnpkg.com", "npm.pkg.github.com", "pypi.org",
                  "pypi.python.org", "files.pythonhosted.org", "github.com", "githubusercontent.com",
                  "gitlab.com", "bitbucket.org", "python-build-standalone")
# A host named whole: ``api.github.com`` (a server's own backend) is not ``github.com``; only the
# download hosts below are matched with any subdomain (``objects.githubusercontent.com``).
_ANY_SUBDOMAIN = ("githubusercontent.com", "files.pythonhosted.org", "python-build-standalone")
_HOST = re.compile("|".join(rf"(?<![\w.-]){re.escape(h)}(?![\w-])" if h not in _ANY_SUBDOMAIN else re.escape(h)
                            for h in REGISTRY_HOSTS + ("codeload.github.com",)), re.IGNORECASE)
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
# npm's engine check, as its install output and debug log print it: the package's declared Node
# range against this machine's (``required: { node: '>=22' }`` … ``current: { node: 'v20.20.2' …``).
ENGINE_NODE = re.compile(r"EBADENGINE.*?required:\s*\{[^}]*?node:\s*'([^']+)'.*?current:\s*\{[^}]*?node:\s*'([^']+)'",
                         re.DOTALL)
_ENGINE_LINE = re.compile(r"(?:requires|required:?)\s+node(?:\.js)?\s*(?:version\s*)?[>=^~]+\s*v?\d", re.IGNORECASE)
MAX_CHARS = 300

DNS, RUNTIME_VERSION, DOWNLOAD_BLOCKED, REGISTRY = "dns", "runtime-version", "download-blocked", "registry"
CACHE_LOCKED = "cache-locked"  # another process held the package cache's install lock for the whole bound
CAUSES = (DNS, RUNTIME_VERSION, DOWNLOAD_BLOCKED, REGISTRY, CACHE_LOCKED)
# How a note names each cause: "the measuring machine's <label>".
CAUSE_LABELS = {DNS: "name resolution", RUNTIME_VERSION: "runtime version", DOWNLOAD_BLOCKED: "downloads",
                REGISTRY: "package registry access", CACHE_LOCKED: "package cache, held by another process"}
_DNS = re.compile(r"getaddrinfo|ENOTFOUND|EAI_AGAIN|Could not resolve host|Name or service not known"
                  r"|Temporary failure in name resolution|dns error|failed to lookup address|does not resolve",
                  re.IGNORECASE)
# A download the install needs that is not the package index itself: a managed Python, a native
# module's prebuilt binary, a release asset (all hosted on GitHub and similar).
_DOWNLOAD = re.compile(r"Failed to download|python-build-standalone|prebuild|releases/download|githubusercontent"
                       r"|No download found|Python downloads are", re.IGNORECASE)


def evidence_and_cause(stderr_tail: str, *, server_only: bool = False) -> tuple[str, str] | None:
    """``(line, cause)`` for a tail, else ``None``; ``server_only`` counts only an engine requirement."""
    if server_only:
        line = engine_line(stderr_tail)
    else:
        line = evidence(stderr_tail, verify_hosts=True)
    return None if line is None else (line, cause(line, stderr_tail))


def cause(line: str, context: str = "") -> str:
    """Which part of the machine ``line`` shows failing (``runtime-version``, ``download-blocked``, ``dns``,
    ``registry``)."""
    if _NO_PYTHON.search(line) and not _DOWNLOAD.search(line) or ENGINE_NODE.search(line) or _ENGINE_LINE.search(line) \
            or "declares engines.node" in line:
        return RUNTIME_VERSION
    if _DOWNLOAD.search(line):
        return DOWNLOAD_BLOCKED
    if _DNS.search(line) or (not _NETWORK.search(line) and _DNS.search(context)):
        return DNS
    return REGISTRY


def engine_line(text: str) -> str | None:
    """One sentence for a Node engine requirement this machine does not meet, or ``None``."""
    found = ENGINE_NODE.search(text)
    if found and below(found.group(1), node_version()):  # checked here: the text's "current" is only words
        package = re.search(r"package:\s*'([^']+)'", text[found.start():found.end()])
        name = f"{package.group(1)} " if package else ""
        return f"npm EBADENGINE: {name}requires node {found.group(1)}; this machine has {found.group(2)}"[:MAX_CHARS]
    for line in text.splitlines():
        said = _ENGINE_LINE.search(line)
        if said and below(line[said.start():], node_version()):
            return line.strip()[:MAX_CHARS]
    return None


def below(requirement: str, current: tuple[int, ...] | None) -> bool:
    """Whether ``current`` is below every lower bound ``requirement`` states (``>=22``, ``^22 || >=24``)."""
    bounds = [tuple(int(p) for p in v.split(".")) for v in re.findall(r"(?:>=?|\^|~)\s*v?(\d+(?:\.\d+){0,2})", requirement)]
    if not bounds or not current:
        return False
    return all(current < bound for bound in bounds)


_NODE: list[tuple[int, ...] | None] = []


def node_version() -> tuple[int, ...] | None:
    """This machine's ``node --version`` as numbers (``None`` without node), read once."""
    if not _NODE:
        import shutil
        import subprocess

        found = None
        node = shutil.which("node")
        if node:
            try:
                out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
                found = tuple(int(p) for p in re.findall(r"\d+", out)[:3]) or None
            except (OSError, subprocess.SubprocessError, ValueError):
                found = None
        _NODE.append(found)
    return _NODE[0]


def evidence(stderr_tail: str, verify_hosts: bool = False) -> str | None:
    """The decisive line showing the machine's network or toolchain failed, or ``None``; with ``verify_hosts`` a
    host said not to resolve must not resolve here either."""
    lines = [line.strip() for line in stderr_tail.splitlines() if line.strip()]
    if verify_hosts and _claims_false_here(lines):
        lines = [line for line in lines if not _NETWORK.search(line) and not _NPM_CODE.search(line)]
    network_anywhere = any(_NETWORK.search(line) for line in lines)
    for accept in (lambda l: (_FETCH.search(l) or _HOST.search(l)) and _NETWORK.search(l),
                   lambda l: _NPM_CODE.search(l),
                   lambda l: network_anywhere and (_FETCH.search(l) or _HOST.search(l)),
                   lambda l: _NO_PYTHON.search(l)):
        found = next((line for line in lines if accept(line)), None)
        if found:
            return found[:MAX_CHARS]
    return engine_line(stderr_tail)


_UNRESOLVED_HOST = re.compile(r"(?:ENOTFOUND|EAI_AGAIN|Could not resolve host:?)\s+'?([A-Za-z0-9.-]+\.[A-Za-z]{2,})")


MAX_VERIFIED_HOSTS = 3  # a tail naming many hosts costs at most this many lookups


def _claims_false_here(lines: list[str]) -> bool:
    quoted = sorted(lines, key=lambda line: not (_FETCH.search(line) or _HOST.search(line)))
    hosts = list(dict.fromkeys(m.group(1).lower() for line in quoted for m in _UNRESOLVED_HOST.finditer(line)))
    return any(resolves_names(hosts=(host,)) for host in hosts[:MAX_VERIFIED_HOSTS])


# Names that resolve on any machine with working DNS (IANA's reserved example domains).
DNS_CONTROL_HOSTS = ("example.com", "example.org", "iana.org")
DNS_CONTROL_VARIABLE = "MCP_CONTEXT_COST_DNS_CONTROL"  # comma-separated hosts in place of the defaults
_RESOLVES: dict[tuple[str, ...], bool] = {}


def dns_control_hosts() -> tuple[str, ...]:
    """The well-known names ``resolves_names`` tries (``DNS_CONTROL_VARIABLE`` overrides them)."""
    import os

    given = tuple(h.strip() for h in os.environ.get(DNS_CONTROL_VARIABLE, "").split(",") if h.strip())
    return given or DNS_CONTROL_HOSTS


def resolves_names(timeout: float = 5.0, hosts: tuple[str, ...] | None = None) -> bool:
    """Whether this machine resolves any of ``hosts`` (default ``dns_control_hosts``), read once per set."""
    import concurrent.futures
    import socket

    hosts = hosts or dns_control_hosts()
    if hosts not in _RESOLVES:
        def one(host: str) -> bool:
            try:
                return bool(socket.getaddrinfo(host, 443))
            except OSError:
                return False

        pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(hosts))
        futures = [pool.submit(one, h) for h in hosts]
        done, _ = concurrent.futures.wait(futures, timeout=timeout)
        pool.shutdown(wait=False)  # a resolver that hangs is left to finish on its own thread
        _RESOLVES[hosts] = any(f.result() for f in done)
    return _RESOLVES[hosts]
