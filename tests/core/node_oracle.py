"""One long-lived ``node`` process answering JSON.parse/JSON.stringify questions (node_oracle.js).

Shared by the canonical-form tests: ``oracle()`` starts the process on first use and reuses it for
the whole test session; it is closed at interpreter exit. A missing ``node`` fails loudly.
"""

from __future__ import annotations

import atexit
import base64
import shutil
import subprocess
import threading
from pathlib import Path

SCRIPT = Path(__file__).with_name("node_oracle.js")


class NodeError(Exception):
    """node's JSON.parse (or JSON.stringify) threw; the message is node's."""


class NodeOracle:
    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is not on PATH: the canonical-form tests use it as the oracle")
        self._proc = subprocess.Popen(
            [node, str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self._lock = threading.Lock()

    def ask(self, text: str, indent: int | None = None) -> str:
        """``JSON.stringify(JSON.parse(text)[, null, indent])`` as node computes it.

        ``text`` must encode to UTF-8 (write lone surrogates as ``\\uXXXX`` escapes). Raises
        ``NodeError`` with node's message when node throws.
        """
        mode = "c" if indent is None else str(indent)
        line = f"{mode} {base64.b64encode(text.encode('utf-8')).decode('ascii')}\n"
        with self._lock:
            self._proc.stdin.write(line.encode("ascii"))
            reply = self._proc.stdout.readline().decode("ascii")
        if not reply:
            raise RuntimeError("the node oracle exited")
        status, _, payload = reply.strip().partition(" ")
        result = base64.b64decode(payload).decode("utf-8")
        if status != "ok":
            raise NodeError(result)
        return result

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()


_instance: NodeOracle | None = None
_instance_lock = threading.Lock()


def oracle() -> NodeOracle:
    """The session's single node process (started on first call)."""
    global _instance
    with _instance_lock:
        if _instance is None:
            _instance = NodeOracle()
            atexit.register(_instance.close)
        return _instance
