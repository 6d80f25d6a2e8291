"""The decisive line of npm's own debug log, for an install whose output says nothing useful."""

from __future__ import annotations

import re
from pathlib import Path

from harness.probe import machine

PREFIX = "npm's log: "
MAX_FILES = 4
MAX_BYTES = 256 << 10  # the end of each log: errors come last
_NUMBER = re.compile(r"^\d+\s+")
_BOILERPLATE = re.compile(r"^error (?:code \S+$|errno |syscall |A complete log|Log files were not written|\s*$"
                          r"|path \S+$|signal \S+$|command failed$|This is a problem related to network|"
                          r"network This is a problem related|network If you are behind a proxy|network In most cases)",
                          re.IGNORECASE)


def existing(npm_cache: Path | None) -> frozenset[str]:
    """The names of the logs in ``npm_cache/_logs`` now, taken before a run."""
    try:
        return frozenset(p.name for p in (npm_cache / "_logs").iterdir()) if npm_cache is not None else frozenset()
    except OSError:
        return frozenset()


def read_logs(npm_cache: Path | None, since: float, before: frozenset[str] = frozenset()) -> str:
    """npm's debug logs written since ``since``, oldest first, each cut to ``MAX_BYTES``."""
    if npm_cache is None:
        return ""
    folder = npm_cache / "_logs"
    try:
        logs = [p for p in folder.iterdir()
                if p.name.endswith(".log") and p.name not in before and not p.is_symlink() and p.is_file()]
    except OSError:
        return ""
    fresh = []
    for path in logs:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime >= since - 1.0:  # a second of slack: file times are not finer than the clock
            fresh.append((mtime, path))
    texts = []
    for _, path in sorted(fresh)[-MAX_FILES:]:
        try:
            with path.open("rb") as handle:
                handle.seek(max(0, handle.seek(0, 2) - MAX_BYTES))
                texts.append(handle.read().decode("utf-8", errors="replace"))
        except OSError:
            continue
    return "\n".join(texts)


def _lines(text: str) -> list[str]:
    return [_NUMBER.sub("", line).strip() for line in text.splitlines() if line.strip()]


def decisive(text: str) -> str | None:
    """The line that says why an npm run failed, or ``None``."""
    errors = [line for line in _lines(text) if line.startswith("error ")]
    shown = [f"npm {line}" for line in errors]
    network = machine.evidence("\n".join(shown), verify_hosts=True)  # an install script can write here too
    if network:
        return network
    telling = next((line for line in errors if not _BOILERPLATE.search(line)), None)
    if telling:
        return f"npm {telling}"[:machine.MAX_CHARS]
    return engine(text)


def engine(text: str) -> str | None:
    """An engine requirement this machine's Node does not meet, as one sentence, or ``None``."""
    return machine.engine_line("\n".join(_lines(text)))
