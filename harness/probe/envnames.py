"""Which environment variable names an entry may declare or set: ``refusal``, ``problem``. docs/SECURITY.md lists
every rule.
"""

from __future__ import annotations

import re

MAX_ENV_NAME_LENGTH = 128
# POSIX portable names; the catalog narrows this to upper case in its schema.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

LOADER = "changes how the dynamic loader or the C library behaves"
SHELL = "makes a shell (or a program that runs one) execute other code"
INTERPRETER = "changes which code an interpreter loads or runs"
PACKAGES = "is a package-manager setting: put it on the command line, where the record shows it, or leave it to the harness"
HARNESS = "is set by the harness itself"
CAPABILITY = "hands the server a host capability (an agent, a bus, a display, a daemon)"

# (prefix, reason): any upper-cased name starting with the prefix is refused.
REFUSED_PREFIXES: tuple[tuple[str, str], ...] = (
    ("LD_", LOADER), ("DYLD_", LOADER), ("MALLOC_", LOADER), ("OPENSSL_", LOADER),
    ("BASH_FUNC_", SHELL),
    ("PYTHON", INTERPRETER), ("PERL", INTERPRETER), ("RUBY", INTERPRETER), ("GEM_", INTERPRETER),
    ("GIT_", INTERPRETER),
    ("NPM_CONFIG_", PACKAGES), ("COREPACK_", PACKAGES), ("UV_", PACKAGES), ("PIP_", PACKAGES),
    ("MCP_CONTEXT_COST_", HARNESS),
)

# name: reason, for exact (upper-cased) names.
REFUSED_NAMES: dict[str, str] = {
    # glibc's list of variables it ignores for setuid programs (sysdeps/generic/unsecvars.h), minus
    # the LD_/MALLOC_ ones covered by a prefix: each changes what the C library loads or reads.
    **dict.fromkeys(("GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
                     "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR"), LOADER),
    **dict.fromkeys(("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH",
                     "GLOBIGNORE", "BASH_XTRACEFD", "ZDOTDIR", "SHELL", "EDITOR", "VISUAL", "PAGER", "BROWSER",
                     "SSH_ASKPASS"), SHELL),
    **dict.fromkeys(("NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "NODE_TLS_REJECT_UNAUTHORIZED",
                     "ELECTRON_RUN_AS_NODE", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
                     "VIRTUAL_ENV"), INTERPRETER),
    **dict.fromkeys(("PATH", "HOME", "TMPDIR", "TMP", "TEMP",
                     "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
                     "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"),
                    HARNESS),
    **dict.fromkeys(("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GNUPGHOME", "DBUS_SESSION_BUS_ADDRESS",
                     "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DOCKER_HOST"), CAPABILITY),
}


def refusal(name: str) -> str | None:
    """Why ``name`` may not be declared or set, as a phrase following "it", or ``None``."""
    upper = name.upper()
    if upper in REFUSED_NAMES:
        return REFUSED_NAMES[upper]
    for prefix, reason in REFUSED_PREFIXES:
        if upper.startswith(prefix):
            return reason
    return None


# Reasons a name is refused even on a ``Target`` built in code (``launch`` checks): it would run
# code the command does not show, or hand over a host capability. Package-manager and harness
# settings are refused where an entry, a flag or an Action input names them.
RUNS_CODE = (LOADER, SHELL, INTERPRETER, CAPABILITY)


def runs_code(name: str) -> str | None:
    """``refusal(name)`` when its reason is one of ``RUNS_CODE``, else ``None``."""
    why = refusal(name)
    return why if why in RUNS_CODE else None


def shape_problem(name: object) -> str | None:
    """What is wrong with ``name``'s shape as a variable name, as a phrase, or ``None``."""
    if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
        return "is not an environment variable name (letters, digits and _, not starting with a digit)"
    if len(name) > MAX_ENV_NAME_LENGTH:
        return f"is longer than {MAX_ENV_NAME_LENGTH} characters"
    return None


def problem(name: object) -> str | None:
    """``shape_problem``, else the refusal, as a phrase to follow the escaped name; or ``None``."""
    shape = shape_problem(name)
    if shape is not None:
        return shape
    why = refusal(name)  # type: ignore[arg-type]
    return None if why is None else f"is refused: it {why}"
