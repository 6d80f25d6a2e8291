"""YAML someone else wrote, loaded in bounded bytes, depth, expanded nodes and number length:
``load``, ``compose``, ``read_text``, ``YAMLLimitError`` (docs/SECURITY.md, 'Bounded input').
Duplicate keys are collected in ``loader.duplicates`` for the caller to report.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml
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


class BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream: str, bounds: Bounds = DEFAULT_BOUNDS) -> None:
        super().__init__(stream)
        self.bounds = bounds
        self.duplicates: list[tuple[ScalarNode, str]] = []
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

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != MERGE_TAG:
                if key_node.value in seen:
                    self.duplicates.append((key_node, key_node.value))
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


def read_text(path: str | os.PathLike, max_bytes: int = DEFAULT_BOUNDS.max_bytes) -> str:
    try:
        return bounded.read_regular(path, max_bytes).decode("utf-8")
    except bounded.TooLarge as exc:
        raise YAMLLimitError(str(exc)) from None


def compose(text: str, bounds: Bounds = DEFAULT_BOUNDS,
            loader_class: type[BoundedLoader] = BoundedLoader) -> tuple[Node | None, BoundedLoader]:
    """``(root node or None, loader)``, bounds checked; the caller disposes the loader."""
    if len(text.encode("utf-8", "surrogatepass")) > bounds.max_bytes:
        raise YAMLLimitError(f"larger than {bounds.max_bytes} bytes")
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


def construct(loader: BoundedLoader, root: Node | None) -> object:
    return loader.construct_document(root) if root is not None else None


def load(text: str, bounds: Bounds = DEFAULT_BOUNDS) -> object:
    """``yaml.safe_load`` with every bound checked."""
    root, loader = compose(text, bounds)
    try:
        return construct(loader, root)
    finally:
        loader.dispose()


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
