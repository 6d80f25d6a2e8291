"""Talking to the Actions runner: workflow commands, step outputs and the job summary, every value escaped.

Rule: docs/SECURITY.md, "Output: terminals, CI logs, published files".
"""

from __future__ import annotations

import codecs
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from harness.util import untrusted


def escape_data(text: str) -> str:
    """``text`` escaped for the message part of a workflow command."""
    return untrusted.escape(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """``text`` escaped for a property value (``title``, ``file``) of a workflow command."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """One workflow-command line (no trailing newline); ``None`` properties are left out."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items()
                     if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotate(stream: TextIO, level: str, title: str, message: str, file: str | None = None) -> None:
    """Write an ``error``/``warning``/``notice`` annotation to ``stream`` (the step's stdout)."""
    if level not in ("error", "warning", "notice"):
        raise ValueError(f"not an annotation level: {level!r}")
    stream.write(command(level, message, title=title, file=file) + "\n")
    stream.flush()


def print_untrusted(stream: TextIO, text: str) -> None:
    """Print the lines of ``text``, each through ``untrusted.line``, with workflow-command
    processing switched off around them."""
    token = secrets.token_hex(16)
    body = "\n".join(untrusted.line(part) for part in text.rstrip().split("\n"))
    stream.write(f"::stop-commands::{token}\n{body}\n::{token}::\n")
    stream.flush()


def format_outputs(values: Mapping[str, str]) -> str:
    """``values`` in the ``GITHUB_OUTPUT`` file syntax, every value in the ``<<DELIMITER`` form."""
    chunks = []
    for name, value in values.items():
        value = str(value)
        delimiter = _delimiter(value)
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(chunks)


def write_outputs(path: str | None, values: Mapping[str, str]) -> None:
    """Append ``values`` to ``GITHUB_OUTPUT`` at ``path`` (nothing when empty). Raises ``OSError``."""
    if path:
        with open(path, "ab") as handle:
            handle.write(_encode(format_outputs(values)))


def append_summary(path: str | None, markdown: str) -> None:
    """Append ``markdown`` to the ``GITHUB_STEP_SUMMARY`` file at ``path`` (nothing when empty)."""
    if path:
        with open(path, "ab") as handle:
            handle.write(_encode(markdown.rstrip("\n") + "\n"))


def relative_to_workspace(path: Path, workspace: Path) -> str:
    """``path`` relative to the workspace when inside it (the container mounts it elsewhere), else as is."""
    try:
        return Path(path).resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)


def _encode(text: str) -> bytes:
    """UTF-8 that never raises: an OS string's undecodable bytes are restored (surrogateescape),
    any other lone surrogate is written as a ``\\udxxx`` escape."""
    return text.encode("utf-8", _LONE_SURROGATES)


def _lone_surrogates(error: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(error, UnicodeEncodeError):  # registered for encoding only
        raise error
    out = bytearray()
    for char in error.object[error.start:error.end]:
        code = ord(char)
        out += bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}".encode("ascii")
    return bytes(out), error.end


_LONE_SURROGATES = "mcp-context-cost-lone-surrogates"
codecs.register_error(_LONE_SURROGATES, _lone_surrogates)


def _delimiter(value: str) -> str:
    while True:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        if delimiter not in value:
            return delimiter
