"""The regen cache's entries as they lie in their pack files (``harness.pages.cache_shards.Pack``): read one,
plant one, find the file that holds it — for tests that damage the cache on disk."""

from __future__ import annotations

from pathlib import Path

from harness.pages import cache_shards


def entries(where: Path) -> dict[str, bytes]:
    """Every entry kept in the folder ``where``, by key."""
    found: dict[str, bytes] = {}
    for path in sorted(where.glob("pack-*")):
        found.update(cache_shards.parse_shard(path.read_bytes()))
    return found


def holding(where: Path, needle: bytes) -> tuple[str, bytes]:
    """``(key, bytes)`` of the one entry whose bytes contain ``needle``."""
    hits = [(key, data) for key, data in entries(where).items() if needle in data]
    assert len(hits) == 1, f"{len(hits)} entries hold {needle!r}"
    return hits[0]


def shard_file(where: Path, key: str) -> Path:
    """The file that holds (or would hold) ``key``'s entry."""
    return where / cache_shards.Pack.shard(key)


def plant(where: Path, key: str, data: bytes) -> None:
    """Put ``data`` under ``key`` in its shard file, as a writer would, the shard's other entries kept."""
    path = shard_file(where, key)
    held = cache_shards.parse_shard(path.read_bytes()) if path.exists() else {}
    held[key] = data
    path.unlink(missing_ok=True)
    path.write_bytes(cache_shards.shard_bytes(held))
