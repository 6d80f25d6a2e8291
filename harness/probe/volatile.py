"""Volatile text in stored evidence, replaced by stable placeholders (issue #10, "Records that churn").

A failing server's stderr often carries text that differs on every launch although nothing about
the server changed: a timestamp, a process id, a temp directory, npm's debug-log file name
(``~/.npm/_logs/2026-11-30T12_34_56_789Z-debug-0.log``), a duration, a memory address. Stored
verbatim, that text would make every re-sweep rewrite the record, its badge and its page. So every
stored *evidence* text — ``stderrTail``, ``notes``, each attempt's outcome and evidence — passes
through :func:`normalise` after redaction. The capture (``rawToolsCapture``, instructions, server
name and version) is never touched: its bytes are what the number is counted from.

Replacements (each a placeholder in angle brackets, so a reader sees that text was there)::

    2026-11-30T12:34:56.789Z, 2026-11-30 12:34:56, 2026-11-30T12_34_56_789Z   ->  <time>
    12:34:56, 12:34:56.789                                                    ->  <time>
    /tmp/tmpa8s7d6f/x, /var/tmp/npx-1234/y                                     ->  /tmp/<tmp>/x ...
        (the first component under a temp root, whatever it looks like — random names can be all
        letters — unless the launch command itself names that path: ``keep``)
    (node:12345), pid 12345, PID: 12345                                       ->  (node:<pid>), pid <pid>
    1733000000 or 1733000000000 (a Unix time in seconds or milliseconds)       ->  <epoch>
    150ms, 1.25s                                                              ->  <n>ms, <n>s
    0x7f3a2b1c4d50                                                            ->  0x<addr>
    Mon Nov 30 2026, 30 Nov 2026, November 30th, 11/30/2026, 2026/11/30        ->  <date>
        (JavaScript's Date.toString, RFC 1123, asctime, toLocaleString; never a dashed
        2026-11-30 alone: protocol revisions are written that way and are evidence)
    3f2a9c1e-8b7d-4e21-9a3c-0f1e2d3c4b5a                                      ->  <uuid>
    a8f3e9b2c1d04f5e8a7b6c5d4e3f2a1b (24 or more hex digits, a session id)     ->  <hex>
    127.0.0.1:43817, localhost:43817, [::1]:43817 (ports 32768-65535)         ->  127.0.0.1:<port> ...
        (unless the launch command names that address: ``keep``)
"""

from __future__ import annotations

import re

_RULES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}[:_]\d{2}[:_]\d{2}(?:[.,_]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"(?<![\d:])\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?![\d:])"), "<time>"),
    (re.compile(r"\((node|python\d?(?:\.\d+)?|bun|deno):\d+\)"), r"(\1:<pid>)"),
    (re.compile(r"\b(pid|PID|Pid|process id|process)(\s*[:=#]?\s*)\d+\b"), r"\1\2<pid>"),
    (re.compile(r"(?<![\w.])1[5-9]\d{8}(?:\d{3})?(?![\w.])"), "<epoch>"),
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?(ms|s)\b"), r"<n>\1"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "0x<addr>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{24,}\b"), "<hex>"),
)
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|" \
         r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_DATES = (
    re.compile(r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+)?(?:" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b|"
               r"\d{1,2}\s+" + _MONTH + r"\b\.?)(?:,?\s+\d{4}\b)?"),
    re.compile(r"(?<![\d/])(?:\d{1,2}/\d{1,2}/\d{4}|\d{4}/\d{1,2}/\d{1,2})(?![\d/])"),
)
# Ephemeral ports only (32768-65535, where Linux and IANA hand them out): 6379, 8080, 53 are evidence.
_PORT = re.compile(r"(?<![\w.])((?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]*\])):"
                   r"(?:3[2-9]\d{3}|[45]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])\b")


_TEMP_PATH = re.compile(r"(?<![\w.-])(/(?:private/)?(?:tmp|var/tmp|var/folders/[^\s'\"/]+/[^\s'\"/]+/T))/"
                        r"([^\s'\"/:,;)\]]+)")


def normalise(text: str | None, keep: str = "") -> str | None:
    """``text`` with every volatile fragment replaced (see module doc); ``None`` stays ``None``.
    A temp path that occurs in ``keep`` (the launch command) is left as it is. Idempotent:
    ``normalise(normalise(t, k), k) == normalise(t, k)``."""
    if not text:
        return text
    text = _TEMP_PATH.sub(lambda m: m.group(0) if m.group(0) in keep else f"{m.group(1)}/<tmp>", text)
    text = _PORT.sub(lambda m: m.group(0) if m.group(0) in keep else f"{m.group(1)}:<port>", text)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    for pattern in _DATES:
        text = pattern.sub("<date>", text)
    return text
