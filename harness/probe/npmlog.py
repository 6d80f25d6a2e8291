"""The decisive line of npm's own debug log, for an install whose output says nothing useful."""

from __future__ import annotations

import re
from pathlib import Path

from harness.probe import machine_fault, node_engine

PREFIX = "npm's log: "
MAX_FILES = 4
MAX_BYTES = 256 << 10  # the end of each log: errors come last
_NUMBER = re.compile(r"^\d+\s+")
_FETCH_RETRY = re.compile(r"^http fetch [A-Z]+ https?://\S+ attempt \d+ failed with E[A-Z_]+$")
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
    """The line that says why an npm run failed (as npm prints it), or ``None``: network/toolchain
    evidence first, then the first real error, an unmet engine, a failed install script."""
    lines = _lines(text)
    errors = [line for line in lines if line.startswith("error ")]
    shown = [f"npm {line}" for line in errors]
    # npm's own retries of a fetch, logged while it still waits (an install cut off at its bound has no error yet)
    shown += [f"npm {line}" for line in lines if _FETCH_RETRY.match(line)]
    network = machine_fault.evidence("\n".join(shown), verify_hosts=True)  # an install script can write here too
    if network:
        return network
    telling = next((line for line in errors if not _BOILERPLATE.search(line)), None)
    if telling and telling.startswith("error command ") and (script := failed_script(text)):
        # "command sh -c …" names no package; the script's own line names it and its exit, and a lookup
        # it failed (a download's host) says why
        lookup = next((line for line in errors if machine_fault.LOOKUP_FAILED.search(line)), None)
        return f"{script}: {lookup.removeprefix('error ')}"[:machine_fault.MAX_CHARS] if lookup else script
    if telling:
        return f"npm {telling}"[:machine_fault.MAX_CHARS]
    return engine(text) or failed_script(text)


_RAN = re.compile(r"^info run (\S+) (\w+) \S+ (.+)$")
_RAN_CODE = re.compile(r"^info run (\S+) (\w+) \{ code: (-?\d+|null), signal: (\S+) \}$")


def failed_script(text: str) -> str | None:
    """The first install script that npm logged as failing (``info run pkg@1.0.0 postinstall
    { code: 1 … }``), with the command it ran: what a silent install did last; ``None`` when none failed."""
    commands = {}
    for line in _lines(text):
        done = _RAN_CODE.match(line)
        if not done:
            if ran := _RAN.match(line):
                commands[ran.group(1), ran.group(2)] = ran.group(3)
        elif done.group(3) not in ("0", "null") or done.group(4) != "null":
            package, event = done.group(1), done.group(2)
            how = f"exited {done.group(3)}" if done.group(3) != "null" else f"was killed by {done.group(4)}"
            command = commands.get((package, event))
            said = f" `{command}`" if command else ""
            return f"npm's {event} script of {package}{said} {how}"[:machine_fault.MAX_CHARS]
    return None


def engine(text: str) -> str | None:
    """An engine requirement this machine's Node does not meet, as one sentence, or ``None``."""
    return node_engine.engine_line("\n".join(_lines(text)))
