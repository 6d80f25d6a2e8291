"""The one way a URL is shown: ``shown`` masks every part that can carry a credential, ``masked`` the
same credentials in a message quoting it (docs/SECURITY.md, 'Secrets and redaction').
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "***"
CREDENTIAL_NAME = re.compile(r"(api[-_]?key|apikey|(?:^|[-_])key$|token|secret|passw(?:or)?d|pwd|credential|auth|"
                             r"private[-_]?key|session|cookie|bearer|^sig$|signature|^code$|^jwt$)", re.IGNORECASE)
# A value that reads as a token whatever it is called: long, letters and digits mixed, no spaces
# (a UUID, a base64 or hex key, ghp_…, sk-…). Words and small numbers (page=2, sort=asc) stay.
TOKEN_LIKE = re.compile(r"(?=[^/]*[A-Za-z])(?=[^/]*[0-9])[A-Za-z0-9._~+=%-]{20,}")
_PARAM = re.compile(r"([^=&;#/]+)=([^&;#/]*)")


# A reference a config writes in place of the value (``${API_KEY}``, ``${env:TOKEN}``) names it,
# it is not it: shown as written.
_REFERENCE = re.compile(r"\$\{[^{}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


def _secret(name: str, value: str) -> bool:
    if _REFERENCE.fullmatch(unquote(value)):
        return False
    return bool(value) and (CREDENTIAL_NAME.search(unquote(name)) is not None or TOKEN_LIKE.fullmatch(value) is not None)


def _params(text: str, found: list[str]) -> str:
    def one(m: re.Match) -> str:
        if not _secret(m.group(1), m.group(2)):
            return m.group(0)
        found.append(m.group(2))
        return f"{m.group(1)}={MASK}"
    return _PARAM.sub(one, text)


def _path(path: str, found: list[str]) -> str:
    segments = path.split("/")
    for i, segment in enumerate(segments):
        name, semicolon, rest = segment.partition(";")
        previous = unquote(segments[i - 1].partition(";")[0]) if i > 0 else ""
        after_name = CREDENTIAL_NAME.search(previous) is not None and not _REFERENCE.fullmatch(previous)
        if name and (after_name or TOKEN_LIKE.fullmatch(name)) and not _REFERENCE.fullmatch(unquote(name)):
            found.append(name)
            name = MASK
        segments[i] = name + semicolon + (_params(rest, found) if semicolon else "")
    return "/".join(segments)


def _split(url: str) -> tuple[str, list[str]]:
    found: list[str] = []
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a netloc that does not parse
    except ValueError:
        scheme, sep, rest = url.partition("://")
        found.append(rest or url)
        _params(rest, found)  # and the pieces a message may quote on their own
        _path(rest.partition("?")[0].partition("#")[0], found)
        return (f"{scheme}{sep}{MASK}" if sep else MASK), found
    userinfo, at, host = parts.netloc.rpartition("@")
    if at:
        user, _, password = userinfo.partition(":")
        found += [userinfo, user, password]
    netloc = f"{MASK}@{host}" if at else parts.netloc
    shown_url = urlunsplit((parts.scheme, netloc, _path(parts.path, found), _params(parts.query, found),
                            _params(parts.fragment, found)))
    return shown_url, found


def shown(url: str) -> str:
    return _split(url)[0]


def credentials(url: str) -> list[str]:
    """The credential texts inside ``url``, as written and decoded, longest first."""
    if "://" not in url:
        return []
    found = _split(url)[1]
    found += [unquote(value) for value in found]
    return sorted({value for value in found if value}, key=len, reverse=True)


def masked(text: str, url: str) -> str:
    for secret in credentials(url):
        text = text.replace(secret, MASK)
    return text


def shown_source(source: str) -> str:
    return shown(source) if "://" in source else source
