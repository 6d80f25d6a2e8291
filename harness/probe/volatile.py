"""Volatile text in stored evidence (``stderrTail``, notes, attempt outcomes) replaced by placeholders —
``<time>``, ``<pid>``, ``<tmp>``, ``<epoch>``, ``<n>ms``, ``0x<addr>``, ``<date>``, ``<uuid>``, ``<hex>``,
``<port>`` — so a re-sweep does not rewrite an unchanged record. The capture is never touched.
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
    """``text`` with every volatile fragment replaced; a temp path or address ``keep`` names is kept. Idempotent;
    ``None`` stays ``None``."""
    if not text:
        return text
    text = _TEMP_PATH.sub(lambda m: m.group(0) if m.group(0) in keep else f"{m.group(1)}/<tmp>", text)
    text = _PORT.sub(lambda m: m.group(0) if m.group(0) in keep else f"{m.group(1)}:<port>", text)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    for pattern in _DATES:
        text = pattern.sub("<date>", text)
    return text
