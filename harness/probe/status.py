"""From a failed launch's evidence to one status (``classify``). docs/METHODOLOGY.md, "Statuses"."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from harness.core.canonical import stringify
from harness.probe import machine_fault, node_engine
from harness.probe.resolve import plan as resolve_plan
from harness.probe.outcome import Capture, Failure
from harness.probe.target import Target

MEASURED = "measured"
DYNAMIC = "dynamic"
AUTH_REQUIRED = "auth-required"
STARTUP_FAILURE = "startup-failure"
TIMEOUT = "timeout"
NOT_APPLICABLE = "not-applicable"
PROTOCOL_MISMATCH = "protocol-mismatch"
REMOTE_AUTH_WALL = "remote-auth-wall"
UNREACHABLE = "unreachable"
MALFORMED_REPLY = "malformed-reply"
UNCOUNTABLE = "uncountable"
TOO_LARGE = "too-large"
NOT_YET_RUN = "not-yet-run"
NOT_MEASURED_HERE = "not-measured-here"
# Statuses the measuring machine itself can cause; only these are retried (methodology, retries).
RETRIED = (STARTUP_FAILURE, TIMEOUT, NOT_MEASURED_HERE)

_CREDENTIAL = (r"(api[ _-]?key|access[ _-]?token|auth(?:entication|orization)?[ _-]?token|bearer token|credentials?"
               r"|personal access token|secret key|client secret|password|\bapi token\b|oauth(?:[ _-]?(?:keys?|token|client))?"
               r"|service[ _-]?account(?: key)?|keys? file)")
_MISSING = r"(required|missing|not (?:set|found|provided|configured|defined)|undefined|must be (?:set|provided)|is empty|invalid|unauthori[sz]ed|expired|no .{0,20}(?:key|token) (?:found|provided|set))"
_AUTH_LINE = re.compile(rf"{_CREDENTIAL}.{{0,80}}{_MISSING}|{_MISSING}.{{0,80}}{_CREDENTIAL}", re.IGNORECASE)
_VERSION_WORDS = re.compile(r"protocol[ _-]?version|unsupported (?:protocol )?version", re.IGNORECASE)
UNSUPPORTED_PROTOCOL_VERSION = -32022


@dataclass(frozen=True)
class Verdict:
    """A failure status and the evidence that decided it; ``environment`` and ``cause`` are set only for
    ``not-measured-here``."""

    status: str
    evidence: str
    environment: str | None = None
    cause: str | None = None


def classify(target: Target, capture: Capture) -> Verdict:
    """The status for a failed ``capture`` (``capture.failure`` must be set)."""
    failure = capture.failure
    assert failure is not None
    declared = _declared_not_applicable(target, capture, failure)
    if declared:
        return declared
    if _is_protocol_refusal(failure):
        return Verdict(PROTOCOL_MISMATCH, _refusal_evidence(failure))
    if failure.kind == "http-auth":
        return Verdict(REMOTE_AUTH_WALL, f"{failure.detail} (phase: {failure.phase})")
    if failure.kind == "unreachable":
        return _unresolved_here(failure) or Verdict(UNREACHABLE, f"{failure.detail} (phase: {failure.phase})")
    if failure.kind in ("malformed", "bad-reply"):
        # a reply arrived and is refused: the same bytes come back on every attempt, so never retried
        return Verdict(MALFORMED_REPLY, f"{failure.detail} (phase: {failure.phase})")
    if failure.kind == "timeout":
        return _with_environment(Verdict(TIMEOUT, f"{failure.detail} (phase: {failure.phase})"), target, capture)
    auth_line = auth_evidence(target, capture)
    if auth_line and failure.kind in ("exited", "jsonrpc-error") and not _broken_after(auth_line, capture.stderr_tail):
        return Verdict(AUTH_REQUIRED, f"{_where(failure)}; it said: {auth_line!r}")
    return _with_environment(Verdict(STARTUP_FAILURE, _failure_evidence(failure, capture)), target, capture)


def _with_environment(verdict: Verdict, target: Target, capture: Capture) -> Verdict:
    """``not-measured-here`` when the tail shows the machine's own failure, else ``verdict``."""
    server_only = capture.phase != "install" and target.resolved is not None
    found = machine_fault.evidence_and_cause(capture.stderr_tail, server_only=server_only, install=capture.phase == "install",
                                       settings=dict(target.set_env)) or _error_said(capture) \
        or _dependency_refused(target, capture)
    if found is None:
        return verdict
    if capture.phase != "install" and found[1] != machine_fault.RUNTIME_VERSION \
            and _crashed_after(found[0], capture.stderr_tail):
        return verdict  # a missing module or unparsable code: no lookup, download or registry explains it
    if found[1] == machine_fault.RUNTIME_VERSION and (impossible := node_engine.impossible_engine(found[0])):
        return Verdict(STARTUP_FAILURE, f"{verdict.evidence}; {impossible}")  # no Node anywhere would run it
    return environment_verdict(verdict, *found)


def _dependency_refused(target: Target, capture: Capture) -> tuple[str, str] | None:
    """An install the registry refused a dependency of the server's package (``machine_fault.dependency_missing``):
    the registry's, since it served the package itself; a filtered mirror answers so for what exists."""
    plan = resolve_plan(target.command) if capture.phase == "install" else None
    if plan is None or plan.launcher != "npx" or "@npm:" in (target.command or ""):
        return None  # an alias (``name@npm:other@1``) fetches another name than the one it runs: whose is unknown
    line = machine_fault.dependency_missing(capture.stderr_tail, plan.package, dict(target.set_env))
    return (line, machine_fault.REGISTRY) if line else None


def _error_said(capture: Capture) -> tuple[str, str] | None:
    """The environment rules read on a JSON-RPC error's message and data: the server's own words, like its
    stderr from a launch (``machine_fault.evidence_and_cause`` with ``server_only``); none when it names a credential."""
    failure = capture.failure
    if failure is None or failure.kind != "jsonrpc-error":
        return None
    said = " ".join(part for part in (failure.message or "", "" if failure.data is None else stringify(failure.data))
                    if part)  # one reply: its data on the message's line
    if not said or names_credential(said):  # a reply naming a credential is its sign-in's, never the network's
        return None
    return machine_fault.evidence_and_cause(said[:_MAX_ERROR_CHARS], server_only=True)


_MAX_ERROR_CHARS = 20_000


def environment_verdict(verdict: Verdict, line: str, cause: str) -> Verdict:
    """``not-measured-here``: the failure ``verdict`` describes was the machine's (``line``, ``cause``)."""
    return Verdict(NOT_MEASURED_HERE, f"{verdict.status} here, {verdict.evidence}; environment evidence (the "
                   f"measuring machine's {machine_fault.CAUSE_LABELS[cause]}, not the server): {line!r}", line, cause)


def _unresolved_here(failure: Failure) -> Verdict | None:
    if not failure.detail.startswith("DNS:") or machine_fault.resolves_names():
        return None
    line = f"{failure.detail}; this machine resolves none of {', '.join(machine_fault.dns_control_hosts())} either"
    return environment_verdict(Verdict(UNREACHABLE, f"{failure.detail} (phase: {failure.phase})"), line, machine_fault.DNS)


def auth_evidence(target: Target, capture: Capture) -> str | None:
    """The first line asking for a credential, or ``None``: a credential word or declared name within 80
    characters of missing/invalid/required/refused; in the error, stderr, then what a server that exited
    printed on stdout (``_stdout_said``)."""
    failure = capture.failure
    texts = [failure.message or "", capture.stderr_tail, stdout_said(capture)] if failure else [capture.stderr_tail]
    named = _named_claim(target.env)
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            words = _ADDRESS.sub("<address>", line)  # a link's path (/docs/api-key-setup) asks for nothing
            if line and not _NPM_OWN.match(line) \
                    and ((named and named.search(words)) or _AUTH_LINE.search(words) or credential_request(words)):
                return line[:300]
    return None


_ADDRESS = re.compile(r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}://\S+", re.IGNORECASE)  # linear: one start a word


# A server asking to be given a credential, in the words servers use: "Provide an access token … or
# set INSTANT_ACCESS_TOKEN", "Please set the FIRECRAWL_API_KEY environment variable", "Configure
# either … BACKLOG_API_KEY", "NOTION_TOKEN is not set". A credential-shaped variable name (upper case,
# ending in TOKEN, KEY, SECRET, PASSWORD, PAT or CREDENTIALS) counts as naming a credential.
_ASK = r"\b(?:provide|set|pass|supply|specify|export|configure|add|enter)\b"
_ENV_SECRET = r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9<>]+)*_(?:TOKEN|KEY|SECRET|PASSWORD|PAT|CREDENTIALS?)\b"
# Also: a sign-in the server says it lacks ("Not authenticated. Run 'acme auth login'", "You must log in
# first", "No credentials found"), a credential option a command-line parser says is missing
# ("Missing required option '--token <token>'"), and Python's crash reading an unset credential variable
# (``KeyError: 'ACME_API_KEY'``).
_SIGN_IN = (r"\bnot (?:logged|signed) in\b|\bnot authenticated\b|\bunauthenticated\b"
            r"|\b(?:login|log[ -]in|sign[ -]in) (?:is )?required\b|\bmust (?:first )?(?:log ?in|sign in|authenticate)\b"
            r"|\bno credentials? (?:(?:were|was) )?(?:found|provided|configured|available)\b"
            r"|(?:required|missing).{0,40}--(?:[a-z0-9]+-)*(?:token|key|secret|password|pat)\b")
_ASKED = re.compile(rf"(?i:{_ASK}).{{0,80}}(?:(?i:{_CREDENTIAL})|{_ENV_SECRET})|{_ENV_SECRET}.{{0,80}}(?i:{_MISSING})"
                    rf"|(?i:{_SIGN_IN})|\bKeyError: ['\"]{_ENV_SECRET}['\"]")


# npm's own words (its registry's 401, "Unable to authenticate"): the package manager's, never a server asking.
_NPM_OWN = re.compile(r"npm (?:error|ERR!|warn|WARN|notice)(?:\s|$)")


def names_credential(text: str) -> bool:
    """Whether ``text`` names a credential at all: a credential word, a credential-shaped variable, a sign-in
    or a place that is itself a secret (``_SECRET_PLACE``: a private key, certificate or identity file)."""
    return bool(re.search(_CREDENTIAL, text, re.IGNORECASE) or re.search(_ENV_SECRET, text)
                or re.search(_SIGN_IN, text, re.IGNORECASE) or _SECRET_PLACE.search(text))


def credential_request(line: str) -> bool:
    """Whether ``line`` asks for a credential (``_ASKED``)."""
    return bool(_ASKED.search(line))


# A declared name that holds a place, not a secret: a directory, a path, a file, a URL, a host or a port
# (``ALLOWED_DIR``, ``ROLLBAR_CONFIG_FILE``, ``DATABASE_URL``); one that also names a key, token, secret,
# password or credential (``GOOGLE_KEY_FILE``, ``CREDENTIALS_PATH``) stays a credential.
LOCATION_NAME = re.compile(r"(?:^|_)(?:DIRS?|DIRECTORY|DIRECTORIES|PATHS?|FILES?|FOLDERS?|ROOT|URL|URI|HOST|PORT"
                           r"|ENDPOINT|WORKSPACE|WORKDIR|HOME)$")
# KEY, PASS and AUTH as words of a name or their secret compounds (APIKEY, PGPASS, OAUTH), never inside another
# word (KEYCLOAK, KEYWORDS, MONKEY, HOTKEYS, COMPASS, AUTHOR); nor TOKEN, SECRET, COOKIE or PEM in a tokenizer, a
# secretary, a cookiecutter or Pembroke.
_SECRET_PART = re.compile(r"(?:^|_)[A-Z]*(?<!MON)(?<!TUR)(?<!HOC)(?<!JOC)(?<!DON)(?<!WHIS)(?<!HOT)(?<!TURN)"
                          r"KEY(?:S|FILE|PATH|STORE|RING|CHAIN|PAIR|ID)?(?:_|$)"
                          r"|PASSWORD|PASSWD|PASSPHRASE|PASSKEY|(?:^|_)(?:PG|DB|ROOT|ADMIN|USER|SMTP|MAIL|FTP|SUDO|HT|MY|KEY)?PASS(?:_|$)"
                          r"|(?:^|_)O?AUTH(?:N|Z|TOKEN|KEY|ORIZATION|ENTICATION)?(?:_|$)"
                          r"|TOKEN(?!I[SZ])|SECRET(?!AR)|CREDENTIAL|(?:^|_)PAT(?:_|$)|COOKIE(?!CUT)|SESSION|IDENTITY|CERT"
                          r"|PEM(?!BR)"
                          r"|(?:^|_)(?:ID_)?(?:RSA|DSA|ECDSA|ED25519|SSH|JWT|NETRC|DSN|P12|PFX|JKS|GPG|PGP)(?:_|$)|PRIVATE"
                          r"|SIGNING|SERVICE_?ACCOUNT|KUBECONFIG|WEBHOOK")
# A place that is itself a secret: a key, certificate, identity, token or secrets file, a service account, a signed
# webhook URL.
_SECRET_PLACE = re.compile(r"private[ _-]?key|\.pem\b|\bpem\b|\bjwt\b|certificate|\bcerts?\b|\bssh\b|identity[ _-]?file"
                           r"|\b(?:tokens?|secrets?)[ _-]?files?\b"
                           r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|service[ _-]?account|webhook|kubeconfig|passphrase|\.?netrc\b"
                           r"|keystore|keyring|\bp12\b|\bpfx\b|\bdsn\b", re.IGNORECASE)


# The same places as a failure's words name them: a directory, a folder, a path, a file, a workspace, a root,
# a URL, a URI, an endpoint, a host or a port.
_PLACE_WORD = re.compile(r"\b(?:director(?:y|ies)|folders?|paths?|files?|workspace|root|urls?|uris?|endpoint"
                         r"|host(?:name)?|port)\b", re.IGNORECASE)


def location_name(name: str) -> bool:
    """Whether the variable ``name`` holds a place (``LOCATION_NAME``) and names no secret."""
    return bool(LOCATION_NAME.search(name.upper())) and not _SECRET_PART.search(name.upper())


def names_place(text: str, variables: Iterable[str] = ()) -> bool:
    """Whether ``text`` names a place rather than a secret: no credential (``names_credential``), and a
    place word (``_PLACE_WORD``) or one of the ``variables`` it names holding a place (``location_name``)."""
    return not names_credential(text) and (bool(_PLACE_WORD.search(text)) or any(location_name(v) for v in variables))


# A credential a phrase names, at its end or before what carries it (its variable, its value, its header).
# Linear: the quotes before the carrier's word are the optional group's alone, so no run of them is split two ways.
_IS_CREDENTIAL = re.compile(rf"(?:(?i:{_CREDENTIAL})|{_ENV_SECRET}|(?i:{_SECRET_PLACE.pattern}))(?i:s)?"
                            r"(?:['\"`]*\s+(?i:(?:environment\s+|env\s+)?(?:variables?|vars?|values?|headers?)))?"
                            r"['\"`\s]*$")


def is_credential(phrase: str) -> bool:
    """Whether the noun phrase ``phrase`` is a credential or several (``the user's API key``, ``the 'ACME_TOKEN'
    variable``, ``the client secrets``), not something of one (``the API key list``, ``the password policy``,
    ``the access token's scopes``)."""
    return bool(_IS_CREDENTIAL.search(phrase))


def _named_claim(env_names) -> re.Pattern | None:
    env_names = [name for name in env_names or () if not location_name(name)]
    if not env_names:
        return None
    names = "|".join(re.escape(name) for name in env_names)
    return re.compile(rf"\b(?:{names})\b.{{0,80}}{_MISSING}|{_MISSING}.{{0,80}}\b(?:{names})\b", re.IGNORECASE)


# A crash no credential, lookup or download explains: the package's code or install is broken (a module
# missing, code that does not parse or names what does not exist), whatever the server said first. A
# reply that is not JSON (an error page) is no such crash.
_BROKEN = re.compile(r"Cannot find (?:module|package)|ERR_MODULE_NOT_FOUND|ModuleNotFoundError|ImportError"
                     r"|ReferenceError|NameError: name"
                     r"|SyntaxError: (?!Unexpected token .{0,20} in JSON|Unexpected end of JSON input"
                     r"|.*is not valid JSON)"
                     r"|Segmentation fault|SIGSEGV")


def package_crash(text: str) -> bool:
    """Whether ``text`` shows a crash of the package's own (``_BROKEN``): a module missing, code that does not parse."""
    return bool(_BROKEN.search(text))


def _broken_after(auth_line: str, stderr_tail: str) -> bool:
    """Whether the tail's last error line is a crash of the package's own (``_BROKEN``)."""
    last = last_line(stderr_tail)
    return last is not None and last != auth_line and bool(_BROKEN.search(last))


def _crashed_after(evidence: str, stderr_tail: str) -> bool:
    """Whether the tail's last error line is a crash of the package's own (``_BROKEN``) other than ``evidence``."""
    last = last_line(stderr_tail)
    return last is not None and last not in evidence and bool(_BROKEN.search(last))


def _declared_not_applicable(target: Target, capture: Capture, failure: Failure) -> Verdict | None:
    declared = target.not_applicable
    if declared is None:
        return None
    words = "\n".join([failure.detail, failure.message or "", capture.stderr_tail])
    if declared.evidence and declared.evidence.lower() in words.lower():
        return Verdict(NOT_APPLICABLE, f"{declared.reason}; the failure said {declared.evidence!r} ({_where(failure)})")
    return None


def _is_protocol_refusal(failure: Failure) -> bool:
    if failure.kind != "jsonrpc-error" or failure.phase != "initialize":
        return False
    if failure.code == -32601:
        return True  # no initialize handler: the 2026-07-28 revision replaced it with server/discover
    if failure.code == UNSUPPORTED_PROTOCOL_VERSION or supported_versions(failure.data) is not None:
        return True
    return bool(_VERSION_WORDS.search(failure.message or ""))


def supported_versions(data: object) -> list | None:
    """``data.supported`` of a JSON-RPC error, verbatim, when it is an array."""
    if isinstance(data, dict) and isinstance(data.get("supported"), list):
        return data["supported"]
    return None


def _refusal_evidence(failure: Failure) -> str:
    text = f"initialize answered JSON-RPC error {failure.code}: {failure.message!r}"
    supported = supported_versions(failure.data)
    if supported is not None:
        text += f"; data.supported: {stringify(supported)}"
    return text


def _failure_evidence(failure: Failure, capture: Capture) -> str:
    text = f"{failure.detail} ({_where(failure)})"
    last = last_line(capture.stderr_tail)
    if failure.kind in ("exited", "spawn") and last:
        text += f"; stderr ends: {last!r}"
    elif said := last_line(stdout_said(capture)):
        text += f"; it printed on stdout: {said!r}"
    return text


def stdout_said(capture: Capture) -> str:
    """The non-JSON lines (the first few, as sampled) a server printed on stdout before it exited without a
    reply: a usage text or a refusal written where the protocol goes; ``""`` otherwise."""
    failure = capture.failure
    if failure is None or failure.kind != "exited" or failure.phase == "install":
        return ""
    return "\n".join(capture.noise_sample)


_ERROR_LINE = re.compile(r"error|exception|fatal|cannot|can't|could not|failed|not found|denied|refus"
                         r"|unsatisfiable|does not satisfy|no versions? (?:available|found)|E404|ENOENT", re.IGNORECASE)
# Lines package managers print after every failure, and npm's 404 message's lines that name nothing
# (``machine_fault.NPM_404_FILLER``); they never say what went wrong.
_BOILERPLATE = re.compile(r"^npm (?:error|ERR!) (?:A complete log of this run|code \w+$|\d{3}$|"
                          r"Log files were not written)|^npm (?:error|ERR!)\s*$|" + machine_fault.NPM_404_FILLER.pattern)


# Stack frames mention "Error" in function names; the line that says what happened is elsewhere.
_FRAME = re.compile(r"^(?:at |File \"|\^|\w+\.\w+\(|throw )")


def last_line(text: str) -> str | None:
    """The most telling line of a stderr tail (at most 300 characters), or ``None``."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _BOILERPLATE.search(line.strip())]
    errors = [line for line in lines if _ERROR_LINE.search(line) and not _FRAME.match(line)]
    chosen = errors[-1] if errors else (lines[-1] if lines else None)
    return chosen[:300] if chosen else None


def _where(failure: Failure) -> str:
    where = f"phase: {failure.phase}"
    if failure.exit_code is not None:
        where += f", exit code {failure.exit_code}"
    return where
