"""A content-addressed disk memo of the server pages' HTML, misses spread over the cores: :func:`memo_map`.

Rules: docs/PAGES.md, "Regen".
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import importlib.util
import json
import multiprocessing
import os
import threading
from collections.abc import Callable
from pathlib import Path

# Converting fewer pages than this in one process is quicker than starting workers.
PARALLEL_FROM = 64
_RENDERER_MODULES = ("harness.pages.server_html", "harness.pages.text",
                     "harness.util.published", "harness.util.untrusted")


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """sha256 of the HTML converter's source files and the markdown-it version."""
    import markdown_it

    digest = hashlib.sha256(markdown_it.__version__.encode())
    for name in _RENDERER_MODULES:
        spec = importlib.util.find_spec(name)
        if spec and spec.origin:
            digest.update(Path(spec.origin).read_bytes())
    return digest.hexdigest()


def folder(root: Path) -> Path:
    """The cache of the repository at ``root``: ``$MCP_CONTEXT_COST_CACHE`` (default
    ``~/.cache/mcp-context-cost``) ``/regen/<sha256 of root's absolute path, 16 hex>/html``."""
    base = os.environ.get("MCP_CONTEXT_COST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mcp-context-cost")
    digest = hashlib.sha256(os.fsencode(Path(root).resolve())).hexdigest()[:16]
    return Path(base) / "regen" / digest / "html"


def _key(path: str, text: str) -> str:
    return hashlib.sha256(f"{fingerprint()}\0{path}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def memo_map(root: Path, inputs: dict[str, str], convert: Callable[[dict[str, str]], dict[str, str]]) -> dict[str, str]:
    """The union of ``convert({path: text})`` over ``inputs``, each read from the cache under ``root`` or
    converted and stored. ``convert`` must be pure and module-level."""
    where = folder(root)
    keys = {path: _key(path, text) for path, text in inputs.items()}
    found: dict[str, dict[str, str]] = {}
    for path, key in keys.items():
        try:
            entry = json.loads((where / key).read_bytes())
        except (OSError, ValueError):
            continue
        # an entry damaged into other JSON is a miss, never published
        if isinstance(entry, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in entry.items()):
            found[path] = entry
    missing = sorted(p for p in inputs if p not in found)
    fresh = _convert_all(convert, [{p: inputs[p]} for p in missing])
    found.update(zip(missing, fresh))
    _store(where, {keys[p]: found[p] for p in missing}, set(keys.values()))
    return {out: text for path in sorted(found) for out, text in sorted(found[path].items())}


def _convert_all(convert: Callable[[dict[str, str]], dict[str, str]], items: list[dict[str, str]]) -> list[dict[str, str]]:
    workers = min(os.cpu_count() or 1, 8)
    # fork only from a single-threaded process: a lock held by another thread would stay held in the child
    if len(items) < PARALLEL_FROM or workers < 2 or threading.active_count() > 1 \
            or "fork" not in multiprocessing.get_all_start_methods():
        return [convert(item) for item in items]
    chunk = max(1, len(items) // (workers * 4))
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(convert, items, chunksize=chunk))


def _store(folder: Path, new: dict[str, dict[str, str]], used: set[str]) -> None:
    """Write the new entries, then remove every entry the run did not use (best effort)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for key, result in new.items():
            temp = folder / f".{key}.{os.getpid()}.tmp"
            temp.write_text(json.dumps(result, ensure_ascii=True), encoding="ascii")
            os.replace(temp, folder / key)
        for path in folder.iterdir():
            if path.name not in used:
                path.unlink(missing_ok=True)
    except OSError:
        pass
