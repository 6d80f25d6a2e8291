"""Reading input someone else controls in bounded size and time: ``read_regular``, ``fetch``,
``deadline``, and the record bounds (docs/SECURITY.md, 'Bounded input').
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
import time
from collections.abc import Iterator


# The largest measurement.json any reader accepts (verify, shard merge): a record holds its capture
# about once, and a launch may produce at most 64 MiB of stdout (harness/probe/limits.py).
MAX_RECORD_BYTES = 128 * 1024 * 1024
# The largest measurement.json the harness writes: under what every reader accepts and under the
# size GitHub warns about (50 MiB; it refuses files over 100 MiB).
MAX_WRITTEN_RECORD_BYTES = 48 * 1024 * 1024
# The most tools a record holds: far above any real server (the largest has a few hundred), low
# enough that counting and validating the per-tool rows stays a bounded moment after the capture,
# and that a reader re-deriving a record someone else wrote refuses more before counting them.
MAX_RECORD_TOOLS = 20_000


class TooLarge(ValueError):
    """The input is larger than the bound."""


class DeadlineExceeded(OSError):
    ...


def read_regular(path: str | os.PathLike, max_bytes: int) -> bytes:
    """At most ``max_bytes`` of the regular file at ``path``; OSError for any other kind; TooLarge."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > max_bytes:
            raise TooLarge(f"larger than {max_bytes} bytes ({info.st_size} bytes)")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # the file grew after fstat
                raise TooLarge(f"larger than {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def fetch(url: str, deadline_seconds: float, max_bytes: int) -> bytes:
    """The body of a GET of ``url``, bounded in time and bytes; DeadlineExceeded, TooLarge, OSError.

    The overall deadline is SIGALRM, so it holds on the main thread only.
    """
    import requests  # costs ~0.1 s to import; most commands never fetch

    ends = time.monotonic() + deadline_seconds
    per_op = max(0.1, min(10.0, deadline_seconds))
    try:
        with _alarm(deadline_seconds), requests.Session() as session, \
                session.get(url, stream=True, timeout=(per_op, per_op), headers={"Accept-Encoding": "identity"}) as reply:
            reply.raise_for_status()
            declared = reply.headers.get("Content-Length", "")
            if declared.isdigit() and len(declared) < 20 and int(declared) > max_bytes:
                raise TooLarge(f"larger than {max_bytes} bytes (Content-Length {declared})")
            chunks, total = [], 0
            for chunk in reply.iter_content(1 << 16):
                total += len(chunk)
                if total > max_bytes:
                    raise TooLarge(f"larger than {max_bytes} bytes")
                chunks.append(chunk)
                if time.monotonic() > ends:
                    raise _Expired()
            return b"".join(chunks)
    except _Expired:
        raise DeadlineExceeded(f"no complete reply within {deadline_seconds:g} s") from None
    except requests.RequestException as exc:
        if time.monotonic() >= ends:
            raise DeadlineExceeded(f"no complete reply within {deadline_seconds:g} s") from None
        raise OSError(str(exc)) from None


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """One overall deadline for a block (main thread only, as ``fetch``); DeadlineExceeded."""
    try:
        with _alarm(seconds):
            yield
    except _Expired:
        raise DeadlineExceeded(f"no complete reply within {seconds:g} s") from None


class _Expired(BaseException):
    # BaseException, so that no library's ``except Exception`` swallows the deadline.
    pass


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _Expired()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"
