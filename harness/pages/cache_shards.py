"""Entries (``{key: bytes}``) of one regen cache folder kept in at most sixteen shard files (:class:`Pack`), and
the bounded single-file reads and writes under it (:func:`read_entry`, :func:`write_file`). Rules: docs/PAGES.md,
"Regen"."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import time
from pathlib import Path


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
MAX_PACK = 512 * 2**20  # twice regen_cache.MAX_INDEX
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
