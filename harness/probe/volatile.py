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
)


_TEMP_PATH = re.compile(r"(?<![\w.-])(/(?:private/)?(?:tmp|var/tmp|var/folders/[^\s'\"/]+/[^\s'\"/]+/T))/"
                        r"([^\s'\"/:,;)\]]+)")


def normalise(text: str | None, keep: str = "") -> str | None:
    """``text`` with every volatile fragment replaced (see module doc); ``None`` stays ``None``.
    A temp path that occurs in ``keep`` (the launch command) is left as it is. Idempotent:
    ``normalise(normalise(t, k), k) == normalise(t, k)``."""
    if not text:
        return text
    text = _TEMP_PATH.sub(lambda m: m.group(0) if m.group(0) in keep else f"{m.group(1)}/<tmp>", text)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
