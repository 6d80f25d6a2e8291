"""Regen's caches of a repository: :func:`folder` (``$MCP_CONTEXT_COST_CACHE/regen/<root>/<kind>``) and the
content-addressed verdicts on records (:class:`Verdicts`): a record whose exact bytes passed re-derivation under
the same code is not counted again. An entry is untrusted: read bounded, used only when it says exactly what the
run would write for that key; anything else is a miss.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import sys
from pathlib import Path

import tiktoken

from harness.core import tokenizer

# Everything re-derivation depends on: the harness's core and util packages (counting, canonical form,
# tokenizer provisioning, the record's shape and bounds), this module, the tiktoken release, its pinned ranks.
_CODE_PACKAGES = ("core", "util")
_MAX_ENTRY = 256


def folder(root: Path, kind: str) -> Path:
    """``$MCP_CONTEXT_COST_CACHE`` (default ``~/.cache/mcp-context-cost``) ``/regen/<sha256 of root's
    absolute path, 16 hex>/<kind>``."""
    base = os.environ.get("MCP_CONTEXT_COST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mcp-context-cost")
    digest = hashlib.sha256(os.fsencode(Path(root).resolve())).hexdigest()[:16]
    return Path(base) / "regen" / digest / kind


@functools.lru_cache(maxsize=1)
def code_key() -> str:
    """sha256 of the sources re-derivation runs (every module of harness.core and harness.util, this
    file), the Python and tiktoken versions and the pinned rank file's hash."""
    harness = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{sys.version_info[:2]}\0{tiktoken.__version__}\0{tokenizer.pinned()}\0".encode())
    sources = [Path(__file__).resolve()] + sorted(p for package in _CODE_PACKAGES
                                                   for p in (harness / package).rglob("*.py"))
    for path in sources:
        digest.update(f"{path.relative_to(harness)}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class Verdicts:
    """Records that passed ``rederive.refusal``, by the sha256 of their bytes and :func:`code_key`.
    :meth:`save` writes the new passes and drops every entry this run did not ask about (best effort)."""

    def __init__(self, where: Path):
        self.where = where
        self._asked: set[str] = set()
        self._new: set[str] = set()

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(f"{code_key()}\0".encode() + data).hexdigest()

    @staticmethod
    def _entry(key: str) -> bytes:
        return f"passed {key}\n".encode("ascii")

    def passed(self, data: bytes) -> bool:
        """Whether these exact bytes passed before under this code."""
        key = self.key(data)
        self._asked.add(key)
        try:  # a regular file only (a FIFO there would block), never followed through a link
            fd = os.open(self.where / key, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return False
        try:
            return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, _MAX_ENTRY + 1) == self._entry(key)
        except OSError:
            return False
        finally:
            os.close(fd)

    def remember(self, data: bytes) -> None:
        """These bytes passed: stored at :meth:`save`."""
        key = self.key(data)
        self._asked.add(key)
        self._new.add(key)

    def save(self) -> None:
        try:
            self.where.mkdir(parents=True, exist_ok=True)
            for key in sorted(self._new):
                temp = self.where / f".{key}.{os.getpid()}.tmp"
                temp.write_bytes(self._entry(key))
                os.replace(temp, self.where / key)
            for path in self.where.iterdir():
                if path.name not in self._asked:
                    path.unlink(missing_ok=True)
        except OSError:
            pass
