"""The environment a launched server sees: a minimal base, the network settings package managers
need, and the entry's declared names. No other host variable reaches the child.

Why each group is passed (issue #2, "stdio client"):
  * base — PATH (to find npx/uvx/node), HOME (npm and uv keep caches there), locale.
  * network — proxy, CA bundle and package-index settings. Behind a TLS-intercepting proxy,
    ``uvx`` and ``npx`` fail at once without the CA variables.
  * declared — the entry's ``env`` names. A declared name takes the host value when the host has
    one (a server author's CI passing a real secret), otherwise a dummy value, so servers that only
    check presence still start. Values are never recorded anywhere; only names are.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping

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
    """Build the child's environment.

    ``declared``: env var names from the catalog entry. ``host``: defaults to ``os.environ``.
    With ``pass_declared_values`` False every declared name gets a dummy value even when the host
    has one (the sweep's posture: no real credential reaches a catalog server).
    Returns a new dict of name → value.
    """
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
    """PATH plus the directory of this interpreter, where the ``uv`` dependency installs ``uvx``."""
    tools_dir = os.path.dirname(sys.executable)
    parts = path.split(os.pathsep) if path else []
    if tools_dir not in parts:
        parts.append(tools_dir)
    return os.pathsep.join(parts)
