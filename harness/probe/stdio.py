"""Newline-delimited JSON-RPC over a child's stdin/stdout, keeping each line's raw text (the SDK's client drops
it) and counting non-JSON lines.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.jsparse import WireJSONError, parse
from harness.probe import compatibility, process, redact
from harness.probe.limits import Limits, MalformedReply, TransportLimitExceeded  # noqa: F401 - re-exported
from harness.probe.replies import Noise

EOF_MARK = object()
BOM = "\ufeff"
EXIT_EOF_GRACE = 1.0  # seconds stdout may stay open after the server exited (held by a descendant)
STDERR_DRAIN_SECONDS = 0.5  # at most, after the teardown, for stderr's last bytes


class _NotUtf8(str):
    """A stdout line with invalid UTF-8 replaced by U+FFFD."""


class _Cut(str):
    """A line the server never finished before stdout closed: evidence of the exit, not a malformed reply."""


@dataclass
class Incoming:
    """One JSON-RPC message from the server: its raw line and the parsed object."""

    raw: str
    message: dict


@dataclass
class StdioTransport:
    """A launched server. Use ``await start()``, ``send()``, ``receive()``, and always ``close()``."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    limits: Limits
    noise: Noise = field(init=False)
    pass_fds: tuple[int, ...] = ()  # inherited by the child (bwrap's --args descriptor)
    exit_code: int | None = None
    _proc: asyncio.subprocess.Process | None = None
    _stderr: deque = field(default_factory=deque)
    _stderr_size: int = 0
    _stdout_total: int = 0
    _tasks: list = field(default_factory=list)
    leniencies: list = field(default_factory=list)  # compatibility.Finding, read by the conversation
    near_miss: str | None = None  # the last skipped line that looked like a reply but is not JSON-RPC 2.0
    name = "stdio"

    def __post_init__(self) -> None:
        self.noise = Noise(self.limits.max_noise_lines, what="non-JSON stdout lines")

    @property
    def noise_lines(self) -> int:
        return self.noise.count

    @property
    def noise_sample(self) -> list[str]:
        return self.noise.sample

    def note_noise(self, text: str) -> None:
        """Count ``text`` as noise; raises ``TransportLimitExceeded`` past ``limits.max_noise_lines``."""
        self.noise.add(text)

    async def start(self) -> None:
        """Spawn the process. Raises ``process.SpawnError``."""
        # The reader splits lines itself, so asyncio's own line limit is not what bounds a message.
        self._proc = await process.spawn(self.argv, self.env, self.cwd, stream_limit=2**16, pass_fds=self.pass_fds)
        self._lines: asyncio.Queue = asyncio.Queue()
        self._tasks = [
            asyncio.ensure_future(self._read_stdout()),
            asyncio.ensure_future(self._read_stderr()),
            asyncio.ensure_future(self._watch_exit()),
        ]

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    async def send(self, message: dict) -> None:
        """Write one message as a JSON line; raises ``ConnectionError`` when stdin is gone."""
        assert self._proc and self._proc.stdin
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            self._proc.stdin.write(data)
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            raise ConnectionError(f"server closed its stdin: {exc}") from None

    async def receive(self) -> Incoming | None:
        """The next JSON-RPC message, or ``None`` once stdout closed; non-JSON lines are counted and skipped.
        Raises ``TransportLimitExceeded``."""
        while True:
            item = await self._lines.get()
            if item is EOF_MARK:
                self._lines.put_nowait(EOF_MARK)
                return None
            if isinstance(item, TransportLimitExceeded):
                self._lines.put_nowait(item)
                raise item
            text = item.strip()
            if text.startswith(BOM):  # framing, not message: the same bytes measure as on HTTP
                text = text[1:].strip()
                self._tolerate(compatibility.Finding(
                    "a stdout line began with a UTF-8 byte-order mark, dropped as framing (JSON.parse in the "
                    "TypeScript SDK and the Python SDK's parser both refuse that line)", compatibility.CLIENTS_ALL))
            if not text:
                continue
            try:
                message = parse_line(text)
            except MalformedReply:
                if not isinstance(item, _Cut):
                    raise
                message = None
            if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                if isinstance(item, _NotUtf8):
                    self._tolerate(compatibility.Finding(
                        "a message held bytes that are not UTF-8, read with U+FFFD in their place as the TypeScript "
                        "SDK reads them (the Python SDK's strict decoding refuses the line)", (compatibility.PYTHON,)))
                return Incoming(raw=text, message=message)
            if looks_like_reply(message):
                self.near_miss = text
            self.note_noise(text)

    def _tolerate(self, finding) -> None:
        if finding not in self.leniencies:
            self.leniencies.append(finding)

    def stderr_tail(self) -> str:
        """The last ``limits.stderr_tail_bytes`` of stderr as text, redacted before the cut."""
        data = b"".join(self._stderr)[-(self.limits.stderr_tail_bytes + redact.CUT_MARGIN) :]
        return redact.cut_tail(data.decode("utf-8", errors="replace"), self.limits.stderr_tail_bytes)

    async def close(self) -> int | None:
        """End the server and everything it started; returns its exit code. Safe to call twice."""
        if self._proc is None:
            return None
        self.exit_code = await process.terminate(self._proc)
        # Everything is ended now: let stderr's reader take what is still in the pipe (the last
        # words of a server that exited) before it is cancelled; bounded, a pipe may stay held.
        if len(self._tasks) > 1:
            await asyncio.wait({self._tasks[1]}, timeout=STDERR_DRAIN_SECONDS)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        # Close the pipes now: a reader stopped at a limit (or pipes a killed grandchild held) would
        # otherwise leave the transport open until garbage collection, after the loop has closed.
        transport = getattr(self._proc, "_transport", None)
        if transport is not None:
            transport.close()
            await asyncio.sleep(0)
        return self.exit_code

    async def wait_exit(self, seconds: float) -> int | None:
        """Wait up to ``seconds`` for the server to exit by itself; its exit code or ``None``."""
        assert self._proc
        try:
            return await asyncio.wait_for(self._proc.wait(), seconds)
        except asyncio.TimeoutError:
            return None

    async def _watch_exit(self) -> None:
        """Report EOF ``EXIT_EOF_GRACE`` seconds after the server exited, even if a descendant holds stdout."""
        assert self._proc
        while self._proc.returncode is None:
            await asyncio.sleep(0.05)
        done, _ = await asyncio.wait({self._tasks[0]}, timeout=EXIT_EOF_GRACE)
        if not done:
            self._lines.put_nowait(EOF_MARK)

    async def _read_stdout(self) -> None:
        assert self._proc and self._proc.stdout
        buffer = bytearray()
        try:
            while True:
                chunk = await self._proc.stdout.read(1 << 16)
                if not chunk:
                    break
                self._stdout_total += len(chunk)
                if self._stdout_total > self.limits.max_total_bytes:
                    raise TransportLimitExceeded(f"stdout exceeded {self.limits.max_total_bytes} bytes in total")
                buffer += chunk
                self._split_lines(buffer)
            if buffer:
                self._lines.put_nowait(_Cut(_decode(buffer)))
            self._lines.put_nowait(EOF_MARK)
        except TransportLimitExceeded as exc:
            self._lines.put_nowait(exc)

    def _split_lines(self, buffer: bytearray) -> None:
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            self._lines.put_nowait(_decode(buffer[start:end]))
            start = end + 1
        del buffer[:start]
        if len(buffer) > self.limits.max_message_bytes:
            raise MalformedReply(f"a message exceeded {self.limits.max_message_bytes} bytes (one stdout line "
                                 "without its end)")

    async def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        keep = self.limits.stderr_tail_bytes + redact.CUT_MARGIN  # redaction sees whole secrets at the cut
        while chunk := await self._proc.stderr.read(1 << 16):
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr and self._stderr_size - len(self._stderr[0]) >= keep:
                self._stderr_size -= len(self._stderr.popleft())


def _decode(data: bytes | bytearray) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _NotUtf8(data.decode("utf-8", errors="replace"))


def parse_line(text: str) -> object:
    """One line parsed as ``JSON.parse`` would, or ``None`` for noise; ``MalformedReply`` for a broken reply."""
    try:
        return parse(text)
    except WireJSONError as exc:
        head = text[:64].lstrip("[ \t\r\n" + BOM)  # a mark beyond the one dropped as framing hides nothing
        if "deeper" in exc.reason or (head.startswith("{") and '"jsonrpc"' in text[:4096]):
            raise MalformedReply(f"a reply that cannot be read: {exc.reason}"
                                 + (f" (at char {exc.pos})" if exc.pos is not None else "")
                                 + f"; it began {redact.cut(text[:80 + redact.CUT_MARGIN], 80)!r}") from None
        return None


def looks_like_reply(value: object) -> bool:
    """A response-shaped object whose ``jsonrpc`` is not ``"2.0"``: skipped, but remembered."""
    return (isinstance(value, dict) and value.get("jsonrpc") != "2.0" and "id" in value and "method" not in value
            and ("result" in value or "error" in value))
