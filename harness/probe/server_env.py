"""The environment a launched server sees (base, network settings, declared names) and the secrets in
environments, commands, headers and URLs.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import sys
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

BASE_NAMES = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")

NETWORK_NAMES = (
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT", "PIP_TRUSTED_HOST", "PIP_FIND_LINKS",
    "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_NATIVE_TLS", "UV_CACHE_DIR",
    "UV_PYTHON", "UV_PYTHON_PREFERENCE", "UV_INSECURE_HOST",
    "NPM_CONFIG_REGISTRY", "npm_config_registry", "NPM_CONFIG_CAFILE", "npm_config_cafile",
    "NPM_CONFIG_CACHE", "npm_config_cache",
)

# Any npm_config_* / UV_* / PIP_* setting is an index or cache setting of a package manager.
NETWORK_PREFIXES = ("npm_config_", "NPM_CONFIG_", "UV_", "PIP_")

# Variables a harness-launched process must not inherit, even via a prefix above.
DENY_PATTERN = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|_KEY|AUTH|CREDENTIAL)", re.IGNORECASE)

DUMMY_PREFIX = "mcp-context-cost-dummy-"


def dummy_value(name: str) -> str:
    """The placeholder given to a declared env name the host does not set."""
    return DUMMY_PREFIX + name.lower()


def child_env(
    declared: Iterable[str] = (),
    host: Mapping[str, str] | None = None,
    *,
    pass_declared_values: bool = True,
) -> dict[str, str]:
    """The child's environment; without ``pass_declared_values`` declared names get dummies."""
    host = os.environ if host is None else host
    env: dict[str, str] = {}
    for name in BASE_NAMES + NETWORK_NAMES:
        if name in host:
            env[name] = host[name]
    for name, value in host.items():
        if name.startswith(NETWORK_PREFIXES) and not DENY_PATTERN.search(name):
            env.setdefault(name, value)
    env["PATH"] = _path_with_tools(env.get("PATH", os.defpath))
    env.setdefault("HOME", os.path.expanduser("~"))
    env.setdefault("LANG", "C.UTF-8")
    for name in declared:
        env[name] = host[name] if pass_declared_values and name in host else dummy_value(name)
    return env


def _path_with_tools(path: str) -> str:
    tools_dir = os.path.dirname(sys.executable)
    parts = path.split(os.pathsep) if path else []
    if tools_dir not in parts:
        parts.append(tools_dir)
    return os.pathsep.join(parts)


# --- which values are secrets ---------------------------------------------------------
# Everything above is handed to the server; of it, these are not public: the values of declared
# names (unless the harness's dummy), header values, and credentials inside URLs — a proxy setting
# (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY, any case) or an index setting (PIP_INDEX_URL, UV_INDEX_URL,
# npm_config_registry…) with ``user:password@``, which npx/uvx need to reach the network. The
# functions below return candidate values; harness.probe.redact.Secrets drops the too-short ones.

SECRET_OPTION = re.compile(r"(api[-_]?key|apikey|(?:^|[-_])key$|token|secret|passw(?:or)?d|pwd|credential|auth|"
                           r"private[-_]?key|session|cookie|bearer)", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")
_QUERY_PARAM = re.compile(r"[?&;]([^=&;#\s]+)=([^&;#\s]*)")
_REFERENCE = re.compile(r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%)$")  # $KEY, ${KEY}, %KEY%
_HEADER_ARG = re.compile(r"^([A-Za-z0-9-]+)\s*:\s*(.+)$", re.DOTALL)


# Credential formats their issuers document with a fixed prefix (OpenAI/Anthropic ``sk-``, Stripe
# ``sk_live_``/``rk_test_``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``, Slack ``xoxb-``, AWS
# access key ids, Google API keys, Hugging Face ``hf_``, npm ``npm_``), long enough not to be a word.
KNOWN_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|"
                         r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|glpat-[A-Za-z0-9_-]{20,}|"
                         r"xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|"
                         r"hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36})")


def url_secrets(text: str) -> list[str]:
    """Credentials in every URL in ``text``."""
    found: list[str] = []
    for url in _URL.findall(text or ""):
        authority = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        userinfo = authority.rpartition("@")[0]
        if userinfo:
            user, _, password = userinfo.partition(":")
            for part in (userinfo, user, password):
                found += [part, unquote(part)]
        for name, value in _QUERY_PARAM.findall(url):
            if SECRET_OPTION.search(unquote(name).lstrip("-")) and credential_like(unquote(value)):
                found += [value, unquote(value)]
    return [value for value in found if value and not _REFERENCE.match(value)]


def credential_like(value: str) -> bool:
    """Whether a value found by name alone reads as a credential, not a setting."""
    return len(value) >= 8 and not value.isdigit() and not re.fullmatch(r"[a-z]+(?:[-_.][a-z]+)*", value)


def header_secrets(value: str) -> list[str]:
    """The secret in a header value: the credential after its scheme, else the whole value."""
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    if not (credential and re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", scheme)):
        return [value] if value else []
    found = [credential]
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credential, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        found += [decoded, decoded.partition(":")[2]]
    return [v for v in found if v]


def argv_secrets(argv: list[str]) -> list[str]:
    """Secrets written into a launch command."""
    found: list[str] = []
    for i, arg in enumerate(argv):
        found += url_secrets(arg)
        found += KNOWN_TOKEN.findall(arg)
        option, eq, value = arg.partition("=")
        if option.startswith("-") and SECRET_OPTION.search(option.lstrip("-")):
            value = value if eq else (argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("-") else "")
            found.append(value if credential_like(value) else "")
        elif eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", option) and DENY_PATTERN.search(option):
            found.append(value if credential_like(value) else "")
        header = _HEADER_ARG.match(arg)
        if header and SECRET_OPTION.search(header.group(1)):
            found += header_secrets(header.group(2))
    return [value for value in found if value and not _REFERENCE.match(value)]


def host_secrets(host: Mapping[str, str] | None = None) -> list[str]:
    """Credentials in the host environment: URL credentials in every value and secret-named package-manager
    settings."""
    host = os.environ if host is None else host
    found: list[str] = []
    for name, value in host.items():
        found += url_secrets(value) if "://" in value else []
        if name.startswith(NETWORK_PREFIXES) and DENY_PATTERN.search(name):
            found.append(value)
    return found


def header_env_name(header: str) -> str:
    """The env var holding a header's value: ``Authorization`` → ``MCP_HEADER_AUTHORIZATION``."""
    return "MCP_HEADER_" + header.upper().replace("-", "_")
