"""Regen's caches of a repository: :func:`folder` (``$MCP_CONTEXT_COST_CACHE/regen/<root>/<kind>``), the
content-addressed verdicts on records (:class:`Verdicts`: a record whose exact bytes passed re-derivation under
the same code is not counted again) and texts derived from inputs (:class:`Outputs`: a page whose inputs and code
are unchanged is not drawn again). An entry may be damaged or foreign: read bounded, a regular file never
followed through a link, used only when it names its own key and its body is whole; anything else is a miss. It
is not checked against its writer: the cache must be writable only by the user who runs regen (CI's is empty).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import stat
import sys
from pathlib import Path

import markdown_it
import tiktoken
import yaml

from harness.core import tokenizer
from harness.db.catalog import SCHEMA_PATH
from harness.util import user_cache

# Everything re-derivation depends on: the harness's core and util packages (counting, canonical form,
# tokenizer provisioning, the record's shape and bounds), this module, the tiktoken release, its pinned ranks.
_CODE_PACKAGES = ("core", "util")
_MAX_ENTRY = 256
MAX_OUTPUTS = 8 * 2**20  # bytes of one Outputs entry (a server page's Markdown, HTML and chart)


def folder(root: Path, kind: str) -> Path:
    """``$MCP_CONTEXT_COST_CACHE`` (default ``~/.cache/mcp-context-cost``) ``/regen/<sha256 of root's
    absolute path, 16 hex>/<kind>``."""
    digest = hashlib.sha256(os.fsencode(Path(root).resolve())).hexdigest()[:16]
    return user_cache.folder("regen") / digest / kind


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


@functools.lru_cache(maxsize=1)
def harness_key() -> str:
    """sha256 of every module of the harness package, the markdown-it version and :func:`code_key` (the
    Python and tiktoken versions, the pinned ranks: a page's breakdown is counted): the code a page is drawn
    and converted with."""
    harness = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{code_key()}\0{markdown_it.__version__}\0".encode())
    for path in sorted(harness.rglob("*.py")):
        digest.update(f"{path.relative_to(harness)}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def read_entry(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (not followed through a link) of at most ``limit``
    bytes; ``None`` otherwise."""
    try:  # a regular file only (a FIFO there would block), never followed through a link
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks) if size <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_entries(where: Path, entries: dict[str, bytes], asked: set[str]) -> None:
    """Write ``entries`` (``{key: bytes}``) under ``where``, then drop every entry not in ``asked`` (best effort)."""
    try:
        where.mkdir(parents=True, exist_ok=True)
        for key in sorted(entries):
            temp = where / f".{key}.{os.getpid()}.tmp"
            temp.write_bytes(entries[key])
            os.replace(temp, where / key)
        for path in where.iterdir():
            if path.name not in asked:
                path.unlink(missing_ok=True)
    except OSError:
        pass


class Outputs:
    """Texts (``{label: text}``) derived from inputs whose digest, with :func:`harness_key`, the caller made
    the key (:meth:`key`). An entry is ``outputs <key> <sha256 of body>\\n`` and the body, the texts as JSON;
    :meth:`save` writes the new entries and drops every entry this run did not ask about (best effort)."""

    def __init__(self, where: Path):
        self.where = where
        self._asked: set[str] = set()
        self._new: dict[str, bytes] = {}

    @staticmethod
    def key(*parts: bytes) -> str:
        digest = hashlib.sha256(f"{harness_key()}\0".encode())
        for part in parts:
            digest.update(hashlib.sha256(part).digest())
        return digest.hexdigest()

    def get(self, key: str) -> dict[str, str] | None:
        """The texts kept for ``key``, or ``None`` (no entry, or one that is not whole and its own)."""
        self._asked.add(key)
        data = read_entry(self.where / key, MAX_OUTPUTS)
        if data is None:
            return None
        head, _, body = data.partition(b"\n")
        if head != f"outputs {key} {hashlib.sha256(body).hexdigest()}".encode("ascii"):
            return None
        try:
            texts = json.loads(body)
        except ValueError:
            return None
        if isinstance(texts, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in texts.items()):
            return texts
        return None

    def put(self, key: str, texts: dict[str, str]) -> None:
        """Keep ``texts`` for ``key`` (written at :meth:`save`; not kept when larger than ``MAX_OUTPUTS``)."""
        self._asked.add(key)
        body = json.dumps(texts, ensure_ascii=True, sort_keys=True).encode("ascii")
        entry = f"outputs {key} {hashlib.sha256(body).hexdigest()}\n".encode("ascii") + body
        if len(entry) <= MAX_OUTPUTS:
            self._new[key] = entry

    def save(self) -> None:
        write_entries(self.where, self._new, self._asked)


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
        return read_entry(self.where / key, _MAX_ENTRY) == self._entry(key)

    def remember(self, data: bytes) -> None:
        """These bytes passed: stored at :meth:`save`."""
        key = self.key(data)
        self._asked.add(key)
        self._new.add(key)

    def save(self) -> None:
        write_entries(self.where, {key: self._entry(key) for key in self._new}, self._asked)


class Catalogs:
    """Catalog texts that passed every check (``catalog.Passed``), with their document as JSON, kept in an
    :class:`Outputs` keyed by the text, the catalog schema, the PyYAML and jsonschema versions and
    :func:`harness_key`. A document JSON cannot hold exactly (a key that is not a string, a date) is not kept."""

    def __init__(self, where: Path):
        self._kept = Outputs(where)

    @staticmethod
    def _key(text: str) -> str:
        return Outputs.key(text.encode("utf-8", "surrogatepass"), _catalog_code())

    def get(self, text: str) -> dict | None:
        found = self._kept.get(self._key(text))
        if found is None or set(found) != {"document"}:
            return None
        try:
            document = json.loads(found["document"])
        except (ValueError, RecursionError):
            return None
        return document if isinstance(document, dict) else None

    def put(self, text: str, document: dict) -> None:
        if _plain_json(document):
            self._kept.put(self._key(text), {"document": json.dumps(document, ensure_ascii=True)})

    def save(self) -> None:
        self._kept.save()


@functools.lru_cache(maxsize=1)
def _catalog_code() -> bytes:
    """What checking a catalog depends on besides the harness: its schema, the PyYAML and jsonschema versions."""
    versions = f"{yaml.__version__}\0{importlib.metadata.version('jsonschema')}\0".encode()
    return versions + SCHEMA_PATH.read_bytes()


def _plain_json(value: object) -> bool:
    """Whether ``value`` reads back from JSON as exactly itself (types included)."""
    if value is None or type(value) in (bool, int, str):
        return True
    if type(value) is float:
        return value == value and value not in (float("inf"), float("-inf"))
    if type(value) is list:
        return all(_plain_json(item) for item in value)
    if type(value) is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    return False
