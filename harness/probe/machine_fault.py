"""Evidence that a failure is the measuring machine's (DNS, runtime, download, registry, cache lock, disk).
docs/METHODOLOGY.md, "Statuses".
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import socket
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from harness.probe import node_engine

# Hosts an install reaches before any server code runs: package registries, git hosts, and where
# uv downloads managed Pythons from (python-build-standalone releases on GitHub).
REGISTRY_HOSTS = ("registry.npmjs.org", "registry.yarnpkg.com", "npm.pkg.github.com", "pypi.org",
                  "pypi.python.org", "files.pythonhosted.org", "github.com", "githubusercontent.com",
                  "gitlab.com", "bitbucket.org", "python-build-standalone")
# A host named whole: ``api.github.com`` or ``github.com.example`` (a server's own backend) is not
# ``github.com``; only the download hosts below are matched with any subdomain
# (``objects.githubusercontent.com``).
_ANY_SUBDOMAIN = ("githubusercontent.com", "files.pythonhosted.org", "python-build-standalone")
_HOST = re.compile("|".join(rf"(?<![\w.-]){re.escape(h)}(?![\w-]|\.[\w-])" if h not in _ANY_SUBDOMAIN else re.escape(h)
                            for h in REGISTRY_HOSTS + ("codeload.github.com",)), re.IGNORECASE)
# Words a resolver, socket or TLS failure is reported with, by npm/node, uv (reqwest), pip and git.
_NETWORK = re.compile(r"getaddrinfo|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH"
                      r"|Could not resolve host|Name or service not known|Temporary failure in name resolution"
                      r"|dns error|failed to lookup address|Connection refused|Network is unreachable"
                      r"|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|unable to get local issuer certificate"
                      r"|CERTIFICATE_VERIFY_FAILED|invalid peer certificate|UnknownIssuer", re.IGNORECASE)
# The package managers' own fetch lines: uv's "Failed to fetch/download: <url>" and npm's "request to
# <url> failed" (node-fetch's words too, so a server's own requests read the same): they count only
# when the URL's host is one an install reaches (``install_host``).
_FETCH = re.compile(r"Failed to (?:fetch|download):? `?(https?://[^\s`'\"]+)|\brequest to (https?://\S+) failed")
# Settings that point npm, uv or pip at another registry, index or Python download mirror.
_INSTALL_SETTINGS = ("npm_config_registry", "NPM_CONFIG_REGISTRY", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX",
                     "UV_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_PYTHON_INSTALL_MIRROR")
# A connection to a named host that failed other than by name resolution: checked against this machine.
_CONNECT_FAILED = re.compile(r"ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|Connection refused"
                             r"|Network is unreachable|connection reset|timed out|ERR_SOCKET_TIMEOUT|socket timeout"
                             r"|socket hang up", re.IGNORECASE)
# npm prints its fetch error's code on a line of its own; every npm fetch is to a registry or git host.
_NPM_CODE = re.compile(r"^npm (?:error|ERR!) code (?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT"
                       r"|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT|SELF_SIGNED_CERT_IN_CHAIN"
                       r"|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\b")
# uv cannot provide an interpreter the package's requires-python accepts.
_NO_PYTHON = re.compile(r"No interpreter found for Python|No download found for request"
                        r"|Python downloads are (?:not allowed|set to .never.)"
                        r"|current Python version \([^)]*\) does not satisfy Python", re.IGNORECASE)
MAX_CHARS = node_engine.MAX_CHARS  # one bound for every evidence line, an engine line's too

DNS, RUNTIME_VERSION, DOWNLOAD_BLOCKED, REGISTRY = "dns", "runtime-version", "download-blocked", "registry"
CACHE_LOCKED = "cache-locked"  # another process held the package cache's install lock for the whole bound
DISK_FULL = "disk-full"  # the install could not write its files: the machine's disk had no space left
CAUSES = (DNS, RUNTIME_VERSION, DOWNLOAD_BLOCKED, REGISTRY, CACHE_LOCKED, DISK_FULL)
# How a note names each cause: "the measuring machine's <label>".
CAUSE_LABELS = {DNS: "name resolution", RUNTIME_VERSION: "runtime version", DOWNLOAD_BLOCKED: "downloads",
                REGISTRY: "package registry access", CACHE_LOCKED: "package cache, held by another process",
                DISK_FULL: "disk, which had no space left"}
# A write that failed for want of disk space, as npm/node (``TAR_ENTRY_ERROR ENOSPC: no space left on
# device, write``), uv/Rust (``No space left on device (os error 28)``), pip/Python (``[Errno 28] No space
# left on device``) and a quota (``EDQUOT``) say it; a bare ``ENOSPC`` is also node's word for too many
# file watchers, which is no disk.
NO_SPACE = re.compile(r"No space left on device|Disk quota exceeded|\bEDQUOT\b", re.IGNORECASE)
_DNS = re.compile(r"getaddrinfo|ENOTFOUND|EAI_AGAIN|Could not resolve host|Name or service not known"
                  r"|Temporary failure in name resolution|dns error|failed to lookup address|does not resolve",
                  re.IGNORECASE)
# A download the install needs that is not the package index itself: a managed Python, a native
# module's prebuilt binary, a release asset (all hosted on GitHub and similar).
_DOWNLOAD = re.compile(r"Failed to download|python-build-standalone|prebuild|releases/download|githubusercontent"
                       r"|No download found|Python downloads are", re.IGNORECASE)


def evidence_and_cause(stderr_tail: str, *, server_only: bool = False, install: bool = False,
                       settings: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``(line, cause)`` for a tail, else ``None``. ``server_only``: only the server wrote the tail, so
    only an unmet Node engine (or a public name on a machine without DNS) counts; ``install``: the tail
    is an install's, whose lookups are downloads; ``settings``: the launch's environment (registries it names)."""
    if not server_only and (full := no_space(stderr_tail)):
        return full, DISK_FULL
    if server_only:
        line = node_engine.engine_line(stderr_tail)
    else:
        line = evidence(stderr_tail, verify_hosts=True, settings=settings)
        if line is not None and install and PACKAGE_CODE_RAN.search(stderr_tail) \
                and cause(line, stderr_tail) == REGISTRY:
            line = None  # the registry served this install: such words are the package's own code's
    if line is None:
        return unresolved_on_dnsless_machine(stderr_tail, download=install)
    return line, cause(line, stderr_tail)


# An install that had run the package's own code: npm fetches every package before it starts any install
# script (its banner, ``> pkg@1.0.0 postinstall``), and uv's build backend builds what uv fetched. Registry
# words in such an install's output (a script can print any) are no evidence of the registry.
PACKAGE_CODE_RAN = re.compile(r"^> \S+@\S+ (?:preinstall|install|postinstall|prepare)$"
                              r"|The build backend returned an error", re.MULTILINE)


# A lookup that failed, naming its host: node (``getaddrinfo ENOTFOUND h``), urllib3/requests
# (``Failed to resolve 'h'``), curl/git (``Could not resolve host: h``), Go (``lookup h on …: no such
# host``), aiohttp (``Cannot connect to host h:443 … [Name or service not known]``).
LOOKUP_FAILED = re.compile(r"(?:ENOTFOUND|EAI_AGAIN|Could not resolve host:?|Failed to resolve)\s+'?([A-Za-z0-9.-]+)"
                            r"|\blookup ([A-Za-z0-9.-]+)(?: on \S+?)?: (?:no such host|server misbehaving|i/o timeout)"
                            r"|Cannot connect to host ([A-Za-z0-9.-]+):\d+ .*(?:Name or service not known"
                            r"|Temporary failure in name resolution|nodename nor servname)", re.IGNORECASE)
# Names no DNS anywhere resolves (RFC 6761, RFC 6762), and the private networks' own suffixes that are no
# public top-level domain (``.home``, ``.corp`` and ``.mail`` ICANN will never delegate; ``.lan``,
# ``.svc``, ``.consul``, ``.docker`` name a LAN, a cluster, a service mesh): failing to resolve one is the
# server's own doing, on any machine outside that network.
_NEVER_PUBLIC = (".invalid", ".test", ".example", ".localhost", ".local", ".internal", ".home.arpa", ".home", ".corp",
                 ".mail", ".lan", ".localdomain", ".intranet", ".private", ".svc", ".consul", ".docker")


# A request a server made that failed without saying why: undici's ``TypeError: fetch failed`` (its
# cause, a lookup or a connection, left out of the message), ``Failed to fetch``, a server's own
# "endpoint unreachable (https://…)". Its host is the URL on the same line, if any. A line that names
# the address a connection went to (``ECONNREFUSED 93.184.216.34:443``) shows the name resolved: a
# refusal from the backend, the server's own.
REQUEST_FAILED = re.compile(r"\bfetch failed\b|\brequest to \S+ failed\b|\bFailed to fetch\b|\bunreachable\b(?! (?:code|state|branch))"
                            r"|\bnetwork error\b", re.IGNORECASE)
# bounded, and a scheme starts where no scheme character precedes it: linear on any line
_URL_HOST = re.compile(r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}://(?:[^/\s@]{0,256}@)?([A-Za-z0-9.-]{1,253})",
                       re.IGNORECASE)
_CONNECTED_TO = re.compile(r"(?:\b\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):\d+")
# A host that is this machine or a private network's: a request to it failing says nothing about DNS.
_LOCAL_HOST = re.compile(r"\blocalhost\b|\b127\.\d+\.\d+\.\d+|\b0\.0\.0\.0\b|\[::1?\]|\b10\.\d+\.\d+\.\d+"
                         r"|\b192\.168\.\d+\.\d+|\b172\.(?:1[6-9]|2\d|3[01])\.\d+\.\d+|\bhost\.docker\.internal\b"
                         r"|[A-Za-z0-9-](?:" + "|".join(re.escape(s) for s in _NEVER_PUBLIC) + r")\b", re.IGNORECASE)
# The same, naming no host: only undici's and the fetch API's own words, which are a request's and nothing else's.
_BARE_FETCH_FAILED = re.compile(r"\bfetch failed\b|\bFailed to fetch\b", re.IGNORECASE)
# A request that got an answer or reached a TLS handshake: an HTTP status, a refusal by the backend, a
# certificate, undici's socket errors. Its name resolved: the failure is the server's or its backend's.
ANSWERED = re.compile(r"(?<!exit )(?<!exit_)\b(?:HTTP(?:/[\d.]+)?|status(?:[ _-]?code)?)\b[\s:=\"']{0,3}[1-5]\d\d\b"
                      r"|\b[1-5]\d\d\b[\s:-]{0,3}(?:Unauthori[sz]ed|Forbidden|Not Found|Bad Request|Too Many Requests"
                      r"|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time-?out|Payment Required|Conflict)"
                      r"|\b(?:Unauthori[sz]ed|Forbidden|Too Many Requests|rate[ -]limit(?:ed)?)\b|certificate|\bSSL\b|\bTLS\b"
                      r"|\b(?:tokens?|keys?|session)\b.{0,20}\b(?:expired|invalid|revoked)\b|\b(?:invalid|expired|revoked) (?:tokens?|keys?)\b"
                      r"|UND_ERR_(?:CONNECT_TIMEOUT|SOCKET|HEADERS_TIMEOUT|BODY_TIMEOUT)|other side closed|\bEPROTO\b|_CERT(?:_|\b)"
                      r"|\bCERT_", re.IGNORECASE)
# A bare failed request that is about something of this machine's own: a file, a directory, a path.
_LOCAL_THING = re.compile(r"ENOENT|EACCES|EPERM|EISDIR|ENOTDIR|no such file|\bnot found\b|\bfiles?\b|\bdirector(?:y|ies)\b"
                          r"|\bfolders?\b|\bpaths?\b|\bworkspace\b|(?:^|[\s'\"=])(?:\.{1,2}|~)?/\w", re.IGNORECASE)


# An error line of another kind (``TypeError: Cannot read …``, ``ZodError``, ``Error: Invalid configuration``):
# after a failed request, it shows the server died of something else.
_OTHER_ERROR = re.compile(r"(?:^|[\s\[(])(?:[A-Z]\w*(?:Error|Exception)|Error|panic|fatal)\b")
_REQUEST_OR_LOOKUP = re.compile(r"fetch failed|Failed to fetch|getaddrinfo|ENOTFOUND|EAI_AGAIN|request to |unreachable",
                                re.IGNORECASE)


def _last_said(lines: list[str]) -> int:
    """The index from which a failed request's line is the last error the lines show (``_OTHER_ERROR``)."""
    return max((i for i, line in enumerate(lines) if _OTHER_ERROR.search(line) and not _REQUEST_OR_LOOKUP.search(line)),
               default=-1)


def _request_hosts(line: str) -> list[tuple[str, str]]:
    """``(words, host)`` for each URL's host on a failed-request line (``REQUEST_FAILED``)."""
    said = REQUEST_FAILED.search(line)
    if not said:
        return []
    return [(line[max(0, said.start() - 160):said.end() + 40], m.group(1)) for m in _URL_HOST.finditer(line)]


def unresolved_on_dnsless_machine(stderr_tail: str, download: bool = False) -> tuple[str, str] | None:
    """``(line, cause)`` when ``stderr_tail`` says a public name did not resolve, that name does not
    resolve here now, and this machine resolves none of ``dns_control_hosts`` either: whatever host it
    is (a server's own backend, a download an install script makes), a machine with DNS would have
    resolved it. ``download-blocked`` for a download (``download``: any lookup of an install's), else ``dns``.
    Outside an install a request that failed without its cause (``REQUEST_FAILED``) counts the same:
    for the host of a URL on its line, or, naming no host at all, when the tail names no local host; never
    when the tail names an address a connection went to, or a connection refused, reset or timed out."""
    lines = [line.strip() for line in stderr_tail.splitlines() if line.strip()]
    # the words around the failed lookup: a traceback's line can be long before it
    found = [(line[max(0, m.start() - 80):m.end() + 40], host.lower().rstrip("."))
             for line in lines for m in LOOKUP_FAILED.finditer(line) for host in m.groups() if host]
    # a connection went to an address, or was refused, reset or timed out: the name resolved
    connected = _CONNECTED_TO.search(stderr_tail) or any(_CONNECT_FAILED.search(line) and not _DNS.search(line)
                                                         for line in lines) or ANSWERED.search(stderr_tail)
    last = _last_said(lines)  # a request failing before another error is not what the server died of
    if not download and not connected:
        found += [(words, host.lower().rstrip(".")) for line in lines[last + 1:] for words, host in _request_hosts(line)]
    public = list({host: (line, host) for line, host in reversed(found)
                   if "." in host and not host.endswith(_NEVER_PUBLIC) and not re.fullmatch(r"[\d.]+", host)}.values())
    public.reverse()  # each host once, with the first line naming it
    if not found and not download and not connected and not _LOCAL_HOST.search(stderr_tail) \
            and not _URL_HOST.search(stderr_tail) \
            and (bare := next((line for line in lines[last + 1:] if _BARE_FETCH_FAILED.search(line)), None)) \
            and not _LOCAL_THING.search(bare) and not resolves_names():
        said = f"a request that names no host failed, and this machine resolves none of {', '.join(dns_control_hosts())}: {bare}"
        return said[:MAX_CHARS], DNS
    if not public or resolves_names():
        return None
    for line, host in public[:MAX_VERIFIED_HOSTS]:
        if not resolves_names(hosts=(host,)):
            said = f"{host} does not resolve here, nor does any of {', '.join(dns_control_hosts())}: {line}"
            return said[:MAX_CHARS], DOWNLOAD_BLOCKED if download or _DOWNLOAD.search(line) else DNS
    return None


def no_space(text: str) -> str | None:
    """The first line of ``text`` saying a write failed for want of disk space, or ``None``."""
    found = next((line.strip() for line in text.splitlines() if NO_SPACE.search(line)), None)
    return found[:MAX_CHARS] if found else None


def cause(line: str, context: str = "") -> str:
    """Which part of the machine ``line`` shows failing (``disk-full``, ``runtime-version``, ``download-blocked``,
    ``dns``, ``registry``)."""
    if NO_SPACE.search(line):
        return DISK_FULL
    if _NO_PYTHON.search(line) and not _DOWNLOAD.search(line) or node_engine.names_requirement(line):
        return RUNTIME_VERSION
    if _DOWNLOAD.search(line):
        return DOWNLOAD_BLOCKED
    if _DNS.search(line) or (not _NETWORK.search(line) and _DNS.search(context)):
        return DNS
    return REGISTRY


def evidence(stderr_tail: str, verify_hosts: bool = False, settings: Mapping[str, str] | None = None) -> str | None:
    """The decisive line showing the machine's network or toolchain failed, or ``None``; with
    ``verify_hosts`` a claim about a host (does not resolve, refuses) must hold here now, and only
    install hosts count (docs/METHODOLOGY.md, 'Statuses')."""
    lines = [line.strip() for line in stderr_tail.splitlines() if line.strip()]
    configured = _configured_hosts(settings)
    if verify_hosts and (_claims_false_here(lines) or _refusals_false_here(lines, configured)):
        lines = [line for line in lines if not _NETWORK.search(line) and not _NPM_CODE.search(line)]
    network_anywhere = any(_NETWORK.search(line) for line in lines)
    # npm prints its code beside the request that failed: a code line with no install fetch is no one's
    install_fetch = any(_install_fetch(line, configured) for line in lines)
    for accept in (lambda l: _names_install_host(l, configured) and _NETWORK.search(l),
                   lambda l: install_fetch and _NPM_CODE.search(l),
                   lambda l: network_anywhere and _names_install_host(l, configured),
                   lambda l: _NO_PYTHON.search(l)):
        found = next((line for line in lines if accept(line)), None)
        if found:
            return found[:MAX_CHARS]
    return node_engine.engine_line(stderr_tail)


def install_host(host: str, configured: frozenset[str] = frozenset()) -> bool:
    """Whether an install reaches ``host``: a registry, git or download host of ``REGISTRY_HOSTS``
    (named whole, or any subdomain of a download host), or one of ``configured`` (``_configured_hosts``)."""
    host = host.lower().rstrip(".")
    if _HOST.fullmatch(host) or any(host.endswith("." + h) for h in _ANY_SUBDOMAIN if "." in h):
        return True
    return host in configured


def _configured_hosts(settings: Mapping[str, str] | None = None) -> frozenset[str]:
    """The hosts the registry/index settings of this process and of ``settings`` name."""
    hosts = set()
    for name in _INSTALL_SETTINGS:
        for value in f"{os.environ.get(name, '')} {(settings or {}).get(name, '')}".split():
            try:
                host = urlsplit(value).hostname
            except ValueError:
                continue
            if host:
                hosts.add(host.lower())
    return frozenset(hosts)


def _fetch_hosts(line: str) -> list[tuple[str, int]]:
    """``(host, port)`` of each URL a package manager's fetch line on ``line`` names."""
    hosts = []
    for found in _FETCH.finditer(line):
        try:
            url = urlsplit(found.group(1) or found.group(2))
            host, port = url.hostname, url.port or (80 if url.scheme == "http" else 443)
        except ValueError:
            continue
        if host:
            hosts.append((host, port))
    return hosts


def _install_fetch(line: str, configured: frozenset[str]) -> bool:
    return any(install_host(h, configured) for h, _ in _fetch_hosts(line))


def _names_install_host(line: str, configured: frozenset[str]) -> bool:
    """A fetch line to an install host, or a line naming a registry or git host (``_HOST``): a
    request to any other host (``localhost:5432``, a server's own API) is the server's business."""
    return _install_fetch(line, configured) or bool(_HOST.search(line))


_UNRESOLVED_HOST = re.compile(r"(?:ENOTFOUND|EAI_AGAIN|Could not resolve host:?)\s+'?([A-Za-z0-9.-]+\.[A-Za-z]{2,})")


MAX_VERIFIED_HOSTS = 3  # a tail naming many hosts costs at most this many lookups


def _claims_false_here(lines: list[str]) -> bool:
    quoted = sorted(lines, key=lambda line: not (_FETCH.search(line) or _HOST.search(line)))
    hosts = list(dict.fromkeys(m.group(1).lower() for line in quoted for m in _UNRESOLVED_HOST.finditer(line)))
    return any(resolves_names(hosts=(host,)) for host in hosts[:MAX_VERIFIED_HOSTS])


def _refusals_false_here(lines: list[str], configured: frozenset[str]) -> bool:
    """Whether ``lines`` say a connection to an install host failed (refused, reset, timed out) while
    that host accepts a connection from this machine now (the first ``MAX_VERIFIED_HOSTS`` such hosts
    are tried): the words are false about this machine, so they are no evidence of its fault."""
    if not any(_CONNECT_FAILED.search(line) and not _DNS.search(line) for line in lines):
        return False  # uv prints each cause on a line of its own, below the URL it fetched
    hosts: list[tuple[str, int]] = []
    for line in lines:
        hosts += [(h, p) for h, p in _fetch_hosts(line) if install_host(h, configured)]
        hosts += [(m.group(0), 443) for m in _HOST.finditer(line) if "python-build-standalone" not in m.group(0).lower()]
    tried = list(dict.fromkeys((h.lower(), p) for h, p in hosts))
    return any(accepts_connections(host, port) for host, port in tried[:MAX_VERIFIED_HOSTS])


_ACCEPTS: dict[tuple[str, int], bool] = {}


def accepts_connections(host: str, port: int = 443, timeout: float = 5.0) -> bool:
    """Whether ``host`` accepts a TCP connection on ``port`` from this machine now (read once)."""
    if (host, port) not in _ACCEPTS:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                _ACCEPTS[host, port] = True
        except OSError:
            _ACCEPTS[host, port] = False
    return _ACCEPTS[host, port]


# Names that resolve on any machine with working DNS (IANA's reserved example domains).
DNS_CONTROL_HOSTS = ("example.com", "example.org", "iana.org")
DNS_CONTROL_VARIABLE = "MCP_CONTEXT_COST_DNS_CONTROL"  # comma-separated hosts in place of the defaults
_RESOLVES: dict[tuple[str, ...], bool] = {}


def dns_control_hosts() -> tuple[str, ...]:
    """The well-known names ``resolves_names`` tries (``DNS_CONTROL_VARIABLE`` overrides them)."""
    given = tuple(h.strip() for h in os.environ.get(DNS_CONTROL_VARIABLE, "").split(",") if h.strip())
    return given or DNS_CONTROL_HOSTS


def resolves_names(timeout: float = 5.0, hosts: tuple[str, ...] | None = None) -> bool:
    """Whether this machine resolves any of ``hosts`` (default ``dns_control_hosts``), read once per set."""
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


# npm's words for a package its registry does not have: the GET of its document or tarball answered 404,
# "'<name>@<spec>' is not in this registry", "The requested resource '<name>@<spec>' could not be found",
# or no version matching a range (``notarget``); as npm prints them, or quoted from its log.
_NPM_MISSING = re.compile(r"^(?:npm's log: )?npm (?:error|ERR!) (?:404 Not Found - GET (https?://\S+)"
                          r"|404\s+(?:The requested resource )?'((?:@[^/\s']+/)?[^@\s']+)@[^']*' "
                          r"(?:is not in this registry|could not be found)"
                          r"|notarget No matching version found for ((?:@[^/\s]+/)?[^@\s]+)@)", re.MULTILINE)
# The other lines of npm's 404 message, which name nothing: ``npm error 404`` alone, and its advice to
# install "from a tarball, folder, http url, or git url" instead.
NPM_404_FILLER = re.compile(r"^npm (?:error|ERR!) 404(?:$|\s+(?:Note that|tarball, folder))")


def dependency_missing(stderr_tail: str, own: str, settings: Mapping[str, str] | None = None) -> str | None:
    """npm's line saying its registry has no package, or no matching version, other than ``own`` (the
    server's own package, which the registry then served) — a dependency; ``None`` when ``own`` is the one
    missing, when the install had run a package's own code (its words can be anything), or when the
    404 came from a host no install reaches."""
    if PACKAGE_CODE_RAN.search(stderr_tail):
        return None
    configured = _configured_hosts(settings)
    missing: list[tuple[str, str]] = []
    for found in _NPM_MISSING.finditer(stderr_tail):
        name = found.group(2) or found.group(3)
        if found.group(1):
            try:
                url = urlsplit(found.group(1))
            except ValueError:
                continue
            if not install_host(url.hostname or "", configured):
                continue
            parts = unquote(url.path).split("/-/", 1)[0].strip("/").split("/")
            name = "/".join(parts[-2:]) if len(parts) >= 2 and parts[-2].startswith("@") else parts[-1]
        if name:
            end = stderr_tail.find("\n", found.start())
            missing.append((stderr_tail[found.start():end if end >= 0 else None].strip(), name.lower()))
    if not missing or any(name == own.lower() for _, name in missing):
        return None
    line, name = missing[0]
    return f"the registry has no {name} (a dependency of {own}, which it served): {line}"[:MAX_CHARS]
