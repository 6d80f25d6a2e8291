"""Regen's caches of a repository: :func:`folder` (``$MCP_CONTEXT_COST_CACHE/regen/<root>/<kind>``), the
content-addressed verdicts on records (:class:`Verdicts`: a record whose exact bytes passed re-derivation under
the same code is not counted again) and on tool-vectors files (:class:`Checks`), and texts derived from inputs
(:class:`Outputs`: a page whose inputs and code are unchanged is not drawn again); the entries of a kind are kept
in a few shard files (:class:`Pack`). An entry may be damaged or foreign: read bounded, a regular file never
followed through a link, used only when it names its own key and its body is whole; anything else is a miss. It is
not checked against its writer: the cache must be writable only by the user who runs regen (CI's is empty).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import re
import stat
import sys
import time
from pathlib import Path

import markdown_it
import tiktoken
import yaml

from harness.core import tokenizer
from harness.db import confine, history
from harness.db.catalog import SCHEMA_PATH
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


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path`` through a temporary sibling and a rename (best effort: an error is ignored; the
    temporary file is removed even when the run is interrupted)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(data)
        os.replace(temp, path)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)


class Pack:
    """Entries (``{key: bytes}``) of one cache folder, kept in ``SHARDS`` files (``pack-<hex digit>``, each key in the
    one its sha256 names) rather than a file each: a new file costs more than its bytes on some disks. A shard
    (:func:`shard_bytes`) is a regular file never followed through a link, read only up to its first entry that is
    not whole and its own, and the shards together only up to ``MAX_PACK`` bytes and ``MAX_ENTRIES`` entries (a
    shard past either bound is read as empty or cut short). :meth:`save` writes the new entries and drops every
    entry this run did not ask about, rewriting only the shards that change or were not read whole, and replacing
    what was not a shard it could read (best effort; nothing when the run neither read nor added an entry)."""

    def __init__(self, where: Path):
        self.where = where
        self._shards: dict[str, dict[str, bytes]] = {}  # shard name: its entries as read
        self._damaged: set[str] = set()  # shards not read to their end: written again at save
        self._bytes_left, self._entries_left = MAX_PACK, MAX_ENTRIES
        self._asked: set[str] = set()
        self._new: dict[str, bytes] = {}

    @staticmethod
    def shard(key: str) -> str:
        return f"pack-{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).digest()[0] % SHARDS:x}"

    def get(self, key: str, limit: int) -> bytes | None:
        """The bytes kept under ``key`` (at most ``limit``), or ``None``."""
        self._asked.add(key)
        data = self._new.get(key)
        if data is None:
            data = self._read(self.shard(key)).get(key)
        return data if data is not None and len(data) <= limit else None

    def put(self, key: str, data: bytes) -> None:
        if not _KEY.fullmatch(key.encode("ascii", "replace")):
            raise ValueError(f"not a cache key: {key!r}")
        self._asked.add(key)
        self._new[key] = data

    def ask(self, key: str) -> None:
        """Keep ``key``'s entry at :meth:`save` without reading it."""
        self._asked.add(key)

    def load(self) -> None:
        """Read every shard now: workers forked after share what was read rather than each reading it again."""
        for digit in range(SHARDS):
            self._read(f"pack-{digit:x}")

    def save(self) -> None:
        new_by_shard: dict[str, dict[str, bytes]] = {}
        for key, data in self._new.items():
            new_by_shard.setdefault(self.shard(key), {})[key] = data
        wrote = False
        if not new_by_shard and not self._shards:  # nothing read, nothing new: nothing to drop or add
            return
        for name in (f"pack-{digit:x}" for digit in range(SHARDS)):
            held = self._read(name)
            kept = {key: data for key, data in held.items() if key in self._asked}
            kept.update(new_by_shard.get(name, {}))
            if name not in self._damaged and kept.keys() == held.keys() and all(held[key] == kept[key] for key in kept):
                continue
            wrote = True
            if kept:
                write_file(self.where / name, shard_bytes(kept))
            else:
                with contextlib.suppress(OSError):
                    (self.where / name).unlink()
            self._shards[name] = kept
            self._damaged.discard(name)
        self._new = {}
        if wrote:
            self._prune()

    def _prune(self) -> None:
        """Remove the files that are not a shard (entries kept a file each by other code) and the temporary files
        no run has written to for ``_STALE`` seconds (left by a run that was killed); best effort. Never in a
        folder reached through a link in the cache (its files are not the cache's)."""
        if self.where.is_symlink() or self.where.parent.is_symlink():
            return
        try:
            names = os.listdir(self.where)
        except OSError:
            return
        for name in names:
            if _SHARD_NAME.fullmatch(name):
                continue
            with contextlib.suppress(OSError):
                st = os.lstat(self.where / name)
                if stat.S_ISDIR(st.st_mode) or name.startswith(".") and time.time() - st.st_mtime < _STALE:
                    continue  # a dot: another run's temporary file, maybe being written
                os.unlink(self.where / name)

    def _read(self, name: str) -> dict[str, bytes]:
        if name not in self._shards:
            data = read_entry(self.where / name, self._bytes_left)
            entries, parsed, whole = _parse(data or b"", self._entries_left)
            self._bytes_left -= len(data or b"")
            self._entries_left -= parsed
            self._shards[name] = entries
            if not whole or data is None and os.path.lexists(self.where / name):  # (not a regular file, or too large)
                self._damaged.add(name)
        return self._shards[name]


SHARD_HEAD = b"mcp-context-cost regen pack 1\n"
SHARDS = 16  # at most 16: a shard is named by one hex digit
# What one Pack reads of its shards, all together: the capture index is one entry of up to MAX_INDEX; 5,000
# servers' pages are about 160 MB, their HTML, verdicts or catalog less, in about 5,000 entries at most.
MAX_PACK = 2 * MAX_INDEX
MAX_ENTRIES = 2**18  # about 1.5 s to parse that many of the smallest entries
_STALE = 3600  # seconds: a run writes a shard in far less, so an older temporary file is one a killed run left
_KEY = re.compile(rb"[A-Za-z0-9._-]{1,128}")
_SHARD_NAME = re.compile(r"pack-[0-9a-f]")


def shard_bytes(entries: dict[str, bytes]) -> bytes:
    """A shard holding ``entries``: ``SHARD_HEAD``, then per entry ``<key> <length> <sha256 of key, NUL, bytes>\\n``
    and its bytes."""
    return SHARD_HEAD + b"".join(f"{key} {len(data)} {_summed(key.encode('ascii'), data)}\n".encode() + data
                                for key, data in sorted(entries.items()))


def _summed(key: bytes, data: bytes) -> str:
    return hashlib.sha256(key + b"\0" + data).hexdigest()


def parse_shard(data: bytes) -> dict[str, bytes]:
    """The entries of a shard's bytes, up to the first that is not whole and its own; none when it does not start
    with ``SHARD_HEAD``."""
    return _parse(data, MAX_ENTRIES)[0]


def _parse(data: bytes, most: int) -> tuple[dict[str, bytes], int, bool]:
    """:func:`parse_shard` of at most ``most`` entries: ``(entries, how many were parsed, whether that was all of
    data)``; empty ``data`` is whole."""
    entries: dict[str, bytes] = {}
    if not data:
        return entries, 0, True
    if not data.startswith(SHARD_HEAD):
        return entries, 0, False
    at, parsed = len(SHARD_HEAD), 0
    while at < len(data) and parsed < most:
        end = data.find(b"\n", at, at + 256)
        fields = data[at:end].split(b" ") if end >= 0 else []
        if len(fields) != 3 or not _KEY.fullmatch(fields[0]) or not fields[1].isdigit() or len(fields[1]) > 12:
            break
        size = int(fields[1])
        body = data[end + 1:end + 1 + size]
        if len(body) != size or _summed(fields[0], body).encode() != fields[2]:
            break
        entries[fields[0].decode("ascii")] = body
        at = end + 1 + size
        parsed += 1
    return entries, parsed, at == len(data)


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
