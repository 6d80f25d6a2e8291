"""YAML someone else wrote, loaded in bounded bytes, depth, expanded nodes and number length:
``load``, ``compose``, ``read_text``, ``YAMLLimitError`` (docs/SECURITY.md, 'Bounded input').
Duplicate keys are collected in ``loader.duplicates`` for the caller to report.

A document libyaml reads as PyYAML's own parser does is composed by libyaml (when PyYAML has it) after a
bounded pass over its events; any other document, error or bound crossed takes the pure-Python path, so
results, errors, lines and paths are the pure-Python path's. Node styles (``style``, ``flow_style``) are the
one difference: nothing here reads them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import CollectionEndEvent, CollectionStartEvent, NodeEvent, ScalarEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness.util import bounded

INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Bounds:
    max_bytes: int = 1024 * 1024
    max_depth: int = 64
    max_nodes: int = 200_000
    max_number_chars: int = 32


DEFAULT_BOUNDS = Bounds()


class YAMLLimitError(ValueError):
    """A document over a bound, with the ``line`` and ``path`` (and composing ``parents``) of the node."""

    def __init__(self, message: str, line: int | None = None, path: tuple = (), parents: tuple = ()):
        super().__init__(message)
        self.line, self.path, self.parents = line, tuple(path), tuple(parents)
        self.root: Node | None = None  # the composed document, when the bound was found after composing


class _KeepsDuplicates(SafeConstructor):
    """The safe constructor, collecting every repeated mapping key in ``duplicates``."""

    duplicates: list[tuple[ScalarNode, str]]

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != MERGE_TAG:
                if key_node.value in seen:
                    self.duplicates.append((key_node, key_node.value))
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


class BoundedLoader(_KeepsDuplicates, yaml.SafeLoader):
    def __init__(self, stream: str, bounds: Bounds = DEFAULT_BOUNDS) -> None:
        super().__init__(stream)
        self.bounds = bounds
        self.duplicates = []
        self._chain: list[tuple[object, Node | None]] = []  # (key or index, parent) per level

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        # Composing is recursive: bound it before Python's own recursion limit does. ``index`` is
        # the key node for a mapping value, the position for a sequence item, None for a key.
        label = index.value if isinstance(index, ScalarNode) else index
        self._chain.append((label, parent))
        try:
            if len(self._chain) > self.bounds.max_depth:
                mark = self.peek_event().start_mark
                chain = [(k, p) for k, p in self._chain if k is not None]
                raise YAMLLimitError(f"nested deeper than {self.bounds.max_depth} levels", mark.line + 1,
                                     tuple(k for k, _ in chain), tuple(p for _, p in chain))
            return super().compose_node(parent, index)
        finally:
            self._chain.pop()


class LibyamlLoader(_KeepsDuplicates):
    """What ``compose`` gives for a document libyaml composed: it is constructed already, into ``document``."""

    def __init__(self, root: Node | None) -> None:
        super().__init__()
        self.root, self.duplicates = root, []
        self.document = self.construct_document(root) if root is not None else None

    def dispose(self) -> None:
        pass


Loader = BoundedLoader | LibyamlLoader
_LIBYAML: Any = getattr(yaml, "CSafeLoader", None)  # absent when PyYAML was built without libyaml
# Characters libyaml reads otherwise than PyYAML's scanner (a tab as a separator; "\r", "\x85", "\u2028" and
# "\u2029" as breaks; a BOM anywhere) and those PyYAML's reader refuses; and a block scalar header with a
# comment glued to it, which PyYAML refuses and libyaml reads.
_LIBYAML_ASIDE = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                            "\U00010000-\U0010ffff]|[|>][-+0-9]*#")


def read_text(path: str | os.PathLike, max_bytes: int = DEFAULT_BOUNDS.max_bytes) -> str:
    try:
        return bounded.read_regular(path, max_bytes).decode("utf-8")
    except bounded.TooLarge as exc:
        raise YAMLLimitError(str(exc)) from None


def compose(text: str, bounds: Bounds = DEFAULT_BOUNDS,
            loader_class: type[BoundedLoader] = BoundedLoader) -> tuple[Node | None, Loader]:
    """``(root node or None, loader)``, bounds checked; the caller disposes the loader. A ``loader_class``
    of the caller's own (its hooks run while composing) always takes the pure-Python path.
    """
    if len(text.encode("utf-8", "surrogatepass")) > bounds.max_bytes:
        raise YAMLLimitError(f"larger than {bounds.max_bytes} bytes")
    if loader_class is BoundedLoader and (composed := _compose_libyaml(text, bounds)) is not None:
        return composed
    loader = loader_class(text, bounds)
    try:
        root = loader.get_single_node()
        if root is not None:
            try:
                _check_graph(root, bounds)
            except YAMLLimitError as exc:
                exc.root = root
                raise
    except BaseException:
        loader.dispose()
        raise
    return root, loader


def construct(loader: Loader, root: Node | None) -> object:
    if isinstance(loader, LibyamlLoader) and root is loader.root:
        return loader.document
    return loader.construct_document(root) if root is not None else None


def load(text: str, bounds: Bounds = DEFAULT_BOUNDS) -> object:
    """``yaml.safe_load`` with every bound checked."""
    root, loader = compose(text, bounds)
    try:
        return construct(loader, root)
    finally:
        loader.dispose()


def _compose_libyaml(text: str, bounds: Bounds) -> tuple[Node | None, LibyamlLoader] | None:
    """``(root, loader)`` composed by libyaml, checked and constructed; None for the pure-Python path to
    redo, and word, whatever libyaml might read otherwise, any error and any bound crossed.
    """
    if _LIBYAML is None or (text and not text.endswith("\n")) or _LIBYAML_ASIDE.search(text):
        return None  # (without a final line break, libyaml ends the last node one line further)
    try:
        if not _events_within(text, bounds.max_depth):
            return None
        composer = _LIBYAML(text)
        try:
            root = composer.get_single_node()
        finally:
            composer.dispose()
        if root is not None:
            _check_graph(root, bounds)
        return root, LibyamlLoader(root)
    except Exception:  # noqa: BLE001 - the pure-Python path raises it again, in its own words
        return None


def _events_within(text: str, max_depth: int) -> bool:
    """No node of ``text`` nested deeper than ``max_depth`` levels (libyaml composes recursively on the C
    stack, which no Python recursion limit guards), none with the tag "!" (libyaml resolves an empty one to
    a string, PyYAML to null) and no scalar in a flow collection holding a "?" (libyaml reads ``[a?b]``,
    PyYAML refuses it).
    """
    parser = _LIBYAML(text)
    try:
        flow: list[bool] = []  # per open collection: is it a flow one (all inside a flow one are)
        while (event := parser.get_event()) is not None:
            if isinstance(event, CollectionEndEvent):
                flow.pop()
            elif isinstance(event, NodeEvent):
                if len(flow) >= max_depth or getattr(event, "tag", None) == "!":
                    return False
                if isinstance(event, CollectionStartEvent):
                    flow.append(bool(event.flow_style))
                elif isinstance(event, ScalarEvent) and "?" in event.value and flow and flow[-1]:
                    return False
    finally:
        parser.dispose()
    return True


def _check_graph(root: Node, bounds: Bounds) -> None:
    """Count nodes with aliases expanded (memoised: linear) and check numbers."""
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()
    # Iterative post-order walk: (node, path, children pushed?)
    stack: list[tuple[Node, tuple, bool]] = [(root, (), False)]
    while stack:
        node, path, expanded = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        if isinstance(node, ScalarNode):
            if node.tag in (INT_TAG, FLOAT_TAG) and len(node.value) > bounds.max_number_chars:
                raise YAMLLimitError(f"a number longer than {bounds.max_number_chars} characters "
                                     f"({len(node.value)} characters)", node.start_mark.line + 1, path)
            sizes[key] = 1
            continue
        children = list(_children(node, path))
        if not expanded:
            if key in in_progress:
                raise YAMLLimitError("an alias refers to a node that contains it (a recursive alias)",
                                     node.start_mark.line + 1, path)
            in_progress.add(key)
            stack.append((node, path, True))
            stack.extend((child, child_path, False) for child, child_path in children if id(child) not in sizes)
            continue
        in_progress.discard(key)
        total = 1 + sum(sizes.get(id(child), 0) for child, _ in children)
        if total > bounds.max_nodes:
            raise YAMLLimitError(f"more than {bounds.max_nodes} nodes once aliases are expanded",
                                 node.start_mark.line + 1, path)
        sizes[key] = total


def _children(node: Node, path: tuple[object, ...]) -> Iterator[tuple[Node, tuple[object, ...]]]:
    if isinstance(node, SequenceNode):
        for index, child in enumerate(node.value):
            yield child, path + (index,)
    elif isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            label = key_node.value if isinstance(key_node, ScalarNode) else "?"
            yield key_node, path + (label,)
            yield value_node, path + (label,)
