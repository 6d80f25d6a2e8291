"""Regen's caches of a repository: :func:`folder` (``$MCP_CONTEXT_COST_CACHE/regen/<root>/<kind>``), the
content-addressed verdicts on records (:class:`Verdicts`: a record whose exact bytes passed re-derivation under
the same code is not counted again) and on tool-vectors files (:class:`Checks`), and texts derived from inputs
(:class:`Outputs`: a page whose inputs and code are unchanged is not drawn again); the entries of a kind are kept
in a few shard files (:class:`cache_shards.Pack`). An entry may be damaged or foreign: read bounded, a regular file never
followed through a link, used only when it names its own key and its body is whole; anything else is a miss. It is
not checked against its writer: the cache must be writable only by the user who runs regen (CI's is empty).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import sys
from pathlib import Path

import markdown_it
import tiktoken
import yaml

from harness.core import tokenizer
from harness.db import confine, history
from harness.db.catalog import SCHEMA_PATH
from harness.pages.cache_shards import Pack, read_entry, write_file
from harness.util import user_cache

# Everything re-derivation depends on: the harness's core and util packages (counting, canonical form,
# tokenizer provisioning, the record's shape and bounds), this module, the tiktoken release, its pinned ranks.
_CODE_PACKAGES = ("core", "util")
_MAX_ENTRY = 256
MAX_OUTPUTS = 8 * 2**20  # bytes of one Outputs entry (a server page's Markdown, HTML and chart)
MAX_INDEX = 256 * 2**20  # bytes of the kept capture index (about 14 MB at 1,000 servers of 104 vectors each)


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


class Outputs:
    """Texts (``{label: text}``) derived from inputs whose digest, with :func:`harness_key`, the caller made
    the key (:meth:`key`), each entry at most ``limit`` bytes (default ``MAX_OUTPUTS``). An entry is ``outputs <key> <sha256 of body>\\n`` and the body, the texts as JSON;
    :meth:`save` writes the new entries and drops every entry this run did not ask about (best effort)."""

    def __init__(self, where: Path, limit: int | None = None):
        self.where, self._limit = where, limit  # bytes of one entry; None: MAX_OUTPUTS
        self._pack = Pack(where)

    @staticmethod
    def key(*parts: bytes) -> str:
        digest = hashlib.sha256(f"{harness_key()}\0".encode())
        for part in parts:
            digest.update(hashlib.sha256(part).digest())
        return digest.hexdigest()

    def get(self, key: str) -> dict[str, str] | None:
        """The texts kept for ``key``, or ``None`` (no entry, or one that is not whole and its own)."""
        data = self._pack.get(key, self._limit or MAX_OUTPUTS)
        if data is None:
            return None
        head, _, body = data.partition(b"\n")
        if head != f"outputs {key} {hashlib.sha256(body).hexdigest()}".encode("ascii"):
            return None
        try:
            texts = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if isinstance(texts, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in texts.items()):
            return texts
        return None

    def put(self, key: str, texts: dict[str, str]) -> None:
        """Keep ``texts`` for ``key`` (written at :meth:`save`; not kept when larger than ``MAX_OUTPUTS``)."""
        body = json.dumps(texts, ensure_ascii=True, sort_keys=True).encode("ascii")
        entry = f"outputs {key} {hashlib.sha256(body).hexdigest()}\n".encode("ascii") + body
        if len(entry) <= (self._limit or MAX_OUTPUTS):
            self._pack.put(key, entry)
        else:
            self._pack.ask(key)

    def save(self) -> None:
        self._pack.save()


class Verdicts:
    """Records that passed ``rederive.refusal``, by the sha256 of their bytes and :func:`code_key`.
    :meth:`save` writes the new passes and drops every entry this run did not ask about (best effort)."""

    def __init__(self, where: Path):
        self.where = where
        self._pack = Pack(where)

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(f"{code_key()}\0".encode() + data).hexdigest()

    @staticmethod
    def _entry(key: str) -> bytes:
        return f"passed {key}\n".encode("ascii")

    def passed(self, data: bytes) -> bool:
        """Whether these exact bytes passed before under this code."""
        key = self.key(data)
        return self._pack.get(key, _MAX_ENTRY) == self._entry(key)

    def remember(self, data: bytes) -> None:
        """These bytes passed: stored at :meth:`save`."""
        key = self.key(data)
        self._pack.put(key, self._entry(key))

    def save(self) -> None:
        self._pack.save()


class Checks:
    """Files that passed a check of the harness's own (a tool-vectors file's shape), kept in a :class:`Verdicts`
    by the sha256 of their bytes, what they were checked as (``label``: the server) and :func:`harness_key`."""

    def __init__(self, where: Path):
        self._verdicts = Verdicts(where)

    @staticmethod
    def _data(label: str, data: bytes) -> bytes:
        return f"{harness_key()}\0{label}\0".encode("utf-8", "surrogatepass") + data

    @classmethod
    def key(cls, label: str, data: bytes) -> str:
        """The key of the verdict on ``data`` checked as ``label``."""
        return Verdicts.key(cls._data(label, data))

    def passed(self, label: str, data: bytes) -> bool:
        """Whether these exact bytes passed before as ``label`` under this code."""
        return self._verdicts.passed(self._data(label, data))

    def remember(self, label: str, data: bytes) -> None:
        """These bytes passed as ``label``: stored at :meth:`save`."""
        self._verdicts.remember(self._data(label, data))

    def save(self) -> None:
        self._verdicts.save()


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


class Histories:
    """The rows of ``history.csv`` as :func:`history.read_history` gives them, kept (one entry) with the length
    and sha256 of the text they were read from: a file that starts with that text (appended to, as a sweep
    does) has only its new lines read; the entry is written again once they are an eighth of what it holds. The entry is ``history <harness_key> <length> <sha256 of those bytes>
    <lines> <sha256 of body>\\n`` and the rows as JSON; anything else is read whole."""

    NAME = "rows"

    def __init__(self, where: Path):
        self.where = where

    def read(self, path: Path) -> list[history.HistoryRow]:
        try:
            data = confine.read_bytes(path.parent, path)
        except (OSError, ValueError):
            return history.read_history(path)  # (which says what is wrong)
        rows, length = self._kept(data)
        if rows is None:
            rows = history.read_history(path)
        if length < 0 or len(data) - length > length // 8:  # a few new lines are read again rather than kept
            self._keep(data, rows)
        return rows

    def _kept(self, data: bytes) -> tuple[list[history.HistoryRow] | None, int]:
        """The rows of ``data`` from the kept entry and its new lines, and how many bytes the entry was read
        from; ``(None, -1)`` when the entry does not apply."""
        entry = read_entry(self.where / self.NAME, MAX_INDEX)
        if entry is None:
            return None, -1
        head, _, body = entry.partition(b"\n")
        fields = head.split(b" ")
        if len(fields) != 6 or fields[0] != b"history" or fields[1] != harness_key().encode() or \
                fields[5] != hashlib.sha256(body).hexdigest().encode() or not fields[2].isdigit() or not fields[4].isdigit():
            return None, -1
        length = int(fields[2])
        if len(data) < length or hashlib.sha256(data[:length]).hexdigest().encode() != fields[3]:
            return None, -1
        try:
            kept = json.loads(body)
            rows = [history.HistoryRow.checked(*row) for row in kept if type(row) is list and len(row) == 6]
            tail = data[length:].decode("utf-8")
        except (ValueError, TypeError, RecursionError):
            return None, -1
        added = history.rows_after(tail, int(fields[4]))
        return (None, -1) if added is None or len(rows) != len(kept) else (rows + added, length)

    def _keep(self, data: bytes, rows: list[history.HistoryRow]) -> None:
        if not data.endswith(b"\n"):  # the next run's new lines start after a whole line
            return
        body = json.dumps([[r.date, r.server, r.tokens, r.toolCount, r.status, r.isolation] for r in rows],
                          ensure_ascii=True, separators=(",", ":")).encode("ascii")
        lines = data.count(b"\n")
        head = f"history {harness_key()} {len(data)} {hashlib.sha256(data).hexdigest()} {lines} {hashlib.sha256(body).hexdigest()}\n"
        if len(head) + len(body) <= MAX_INDEX:
            write_file(self.where / self.NAME, head.encode("ascii") + body)
