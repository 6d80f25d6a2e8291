"""A real HTTP server on 127.0.0.1 serving one directory, for the ``--index URL`` / baseline fetch
tests (a raw URL stands in for raw.githubusercontent.com, which tests cannot reach)."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@contextlib.contextmanager
def serving(directory: Path):
    """Yield the base URL (``http://127.0.0.1:PORT/``) of a server for ``directory``."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
