"""Edits of ``servers.yaml`` as text, so a change is a diff of only what changed: ``append_entries``,
``replace_field``, ``write_checked``. Each edit re-parses its result and checks it (``EditError``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from harness.db.catalog import load_catalog
from harness.util import atomic, published

WIDTH = 100  # the catalog's folding width (what yaml.safe_dump was given when the file was written)


class EditError(ValueError):
    """The edit cannot be made as text, or would not round-trip."""


def dump_entry(entry: dict) -> str:
    """One entry as the catalog writes it."""
    return yaml.safe_dump([entry], sort_keys=False, width=WIDTH, allow_unicode=True)


def append_entries(text: str, entries: list[dict]) -> str:
    """``text`` with ``entries`` appended to its ``servers`` list (which must end the file)."""
    if not entries:
        return text
    before = yaml.safe_load(text)
    if not isinstance(before, dict) or not isinstance(before.get("servers"), list):
        raise EditError('the catalog has no "servers" list to append to')
    root = yaml.compose(text)
    servers = _value(root, "servers")
    if not isinstance(servers, SequenceNode) or text[servers.end_mark.index:].strip():
        raise EditError('the "servers" list is not the last thing in the file: entries cannot be appended as text')
    body = text.rstrip("\n") + "\n"
    new = body + "".join("\n" + dump_entry(entry) for entry in entries)
    _same(yaml.safe_load(new), {**before, "servers": before["servers"] + list(entries)})
    return new


def replace_field(text: str, name: str, field: str, value: str) -> str:
    """``text`` with the scalar ``field`` of entry ``name`` set to ``value``."""
    root = yaml.compose(text)
    servers = _value(root, "servers")
    node = next((n for n in getattr(servers, "value", []) if _scalar(_value(n, "name")) == name), None)
    if node is None:
        raise EditError(f"no entry named {name!r}")
    pair = next(((k, v) for k, v in node.value if _scalar(k) == field), None)
    if pair is None or not isinstance(pair[1], ScalarNode):
        raise EditError(f"entry {name!r} has no scalar field {field!r}")
    key, old = pair
    indent = " " * key.start_mark.column
    rendered = yaml.safe_dump({field: value}, width=WIDTH, allow_unicode=True).rstrip("\n")
    rendered = rendered.replace("\n", "\n" + indent)  # continuation lines follow the key's indentation
    new = text[:key.start_mark.index] + rendered + text[old.end_mark.index:]
    expected = yaml.safe_load(text)
    next(e for e in expected["servers"] if e.get("name") == name)[field] = value
    _same(yaml.safe_load(new), expected)
    return new


def write_checked(path: Path, text: str) -> None:
    """Write ``text`` over the catalog at ``path`` only if it loads as a valid catalog; CatalogError."""
    with tempfile.TemporaryDirectory() as tmp:
        trial = Path(tmp) / published.CATALOG
        trial.write_text(text, encoding="utf-8")
        load_catalog(trial)
    atomic.write_text(path, text)


def _value(node, key: str):
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if _scalar(k) == key:
                return v
    return None


def _scalar(node) -> str | None:
    return node.value if isinstance(node, ScalarNode) else None


def _same(got: object, expected: object) -> None:
    if got != expected:
        raise EditError("the edited catalog does not read back as intended; nothing was written")
