"""The one way a URL is printed (terminals, CI logs, JSON output): credentials masked.

``shown(url)`` replaces the userinfo (``user:pass@``) and the value of every query parameter whose
name reads as a credential (``api_key``, ``token``, ``sig``…) with ``***``; the scheme, host, path
and other parameters stay as written, so the URL still says where it points. ``masked(text, url)``
does the same to a message that may quote ``url`` or pieces of it (an HTTP library's error names
the path and query without the scheme). Output still goes through ``harness.util.untrusted``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "***"
CREDENTIAL_NAME = re.compile(r"(api[-_]?key|apikey|(?:^|[-_])key$|token|secret|passw(?:or)?d|pwd|credential|auth|"
                             r"private[-_]?key|session|cookie|bearer|^sig$|signature|^code$|^jwt$)", re.IGNORECASE)
_PARAM = re.compile(r"([^=&;#]+)=([^&;#]*)")


def _credentials(url: str) -> list[str]:
    """The credential texts inside ``url``, as written and percent-decoded, longest first."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        user, _, password = userinfo.partition(":")
        found += [userinfo, password, user]
    found += [value for name, value in _PARAM.findall(parts.query) if CREDENTIAL_NAME.search(unquote(name))]
    found += [unquote(value) for value in list(found)]
    return sorted({value for value in found if value}, key=len, reverse=True)


def shown(url: str) -> str:
    """``url`` with its userinfo and credential-named query values replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return masked(url, url)
    host = parts.netloc.rpartition("@")
    netloc = f"{MASK}@{host[2]}" if host[1] else parts.netloc
    query = _PARAM.sub(lambda m: f"{m.group(1)}={MASK}" if CREDENTIAL_NAME.search(unquote(m.group(1))) else m.group(0),
                       parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def masked(text: str, url: str) -> str:
    """``text`` with every credential of ``url`` in it (whole, or as percent-decoded) replaced."""
    if "://" not in url:
        return text
    for secret in _credentials(url):
        text = text.replace(secret, MASK)
    return text


def shown_source(source: str) -> str:
    """A path or URL given on a command line, as printed: URLs through :func:`shown`."""
    return shown(source) if "://" in source else source
