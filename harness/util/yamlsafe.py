"""Loading YAML that someone else wrote, in bounded time and memory (issue #9, kind 5).

PyYAML's ``safe_load`` refuses arbitrary objects but not size: a 354-byte "billion laughs" alias
bomb composes into a tiny graph that expands to 9^9 nodes in whatever walks it next (schema
validation, ``json.dumps``, a comparison); YAML nested 20,000 deep overflows the recursive
composer; a 5,000-digit integer ends in ``int()``'s digit limit. Here every one of those is a
:class:`YAMLLimitError` naming the line and the path of the offending node, before anything walks
the document:

  * ``max_bytes``   — the text itself (``read_text`` also refuses anything but a regular file, so a
                      FIFO or ``/dev/zero`` is never read);
  * ``max_depth``   — nesting of sequences and mappings, checked while composing;
  * ``max_nodes``   — nodes of the document *with every alias expanded* (a recursive alias is
                      refused outright);
  * ``max_number_chars`` — the length of any scalar that resolves to an int or a float.

Duplicate mapping keys are collected (``loader.duplicates``: ``(key node, key)``), not silently
resolved to the last one; the caller decides how to report them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness.util import bounded

INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Bounds:
    """Limits on one YAML document: bytes of text, nesting depth, nodes after alias expansion,
    characters of one number."""

    max_bytes: int = 1024 * 1024
    max_depth: int = 64
    max_nodes: int = 200_000
    max_number_chars: int = 32


DEFAULT_BOUNDS = Bounds()


class YAMLLimitError(ValueError):
    """A document over a bound. ``line`` is 1-based (or ``None``), ``path`` the keys and indices
    from the root to the node (empty when unknown), ``parents[k]`` the (possibly half-composed)
    node holding ``path[k]`` when the error came while composing; ``str()`` is the message alone."""

    def __init__(self, message: str, line: int | None = None, path: tuple = (), parents: tuple = ()):
        super().__init__(message)
        self.line, self.path, self.parents = line, tuple(path), tuple(parents)
        self.root: Node | None = None  # the composed document, when the bound was found after composing


class BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses nesting deeper than ``bounds.max_depth`` while composing and
    records duplicate mapping keys instead of keeping the last one silently."""

    def __init__(self, stream, bounds: Bounds = DEFAULT_BOUNDS):
        super().__init__(stream)
        self.bounds = bounds
        self.duplicates: list[tuple[ScalarNode, str]] = []
        self._chain: list[tuple[object, Node | None]] = []  # (key or index, parent) per level

    def compose_node(self, parent, index):
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

    def construct_mapping(self, node, deep=False):
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != MERGE_TAG:
                if key_node.value in seen:
                    self.duplicates.append((key_node, key_node.value))
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


def read_text(path: str | os.PathLike, max_bytes: int = DEFAULT_BOUNDS.max_bytes) -> str:
    """The UTF-8 text of the regular file at ``path``, at most ``max_bytes`` bytes
    (``harness.util.bounded.read_regular``: never blocks on a FIFO, never reads a device).

    Raises ``OSError`` (unreadable, not a regular file), ``YAMLLimitError`` (too large) or
    ``UnicodeDecodeError``.
    """
    try:
        return bounded.read_regular(path, max_bytes).decode("utf-8")
    except bounded.TooLarge as exc:
        raise YAMLLimitError(str(exc)) from None


def compose(text: str, bounds: Bounds = DEFAULT_BOUNDS, loader_class: type = BoundedLoader):
    """``(root node or None, loader)`` for one YAML document in ``text``, every bound checked.

    Raises ``YAMLLimitError`` for a bound, ``yaml.YAMLError`` for a syntax error. The caller must
    ``loader.dispose()``; ``construct(loader, root)`` builds the Python value.
    """
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
    """The Python value of a composed (and checked) document."""
    return loader.construct_document(root) if root is not None else None


def load(text: str, bounds: Bounds = DEFAULT_BOUNDS) -> object:
    """``yaml.safe_load`` with every bound of ``bounds`` checked (see module doc).

    Raises ``YAMLLimitError`` or ``yaml.YAMLError``."""
    root, loader = compose(text, bounds)
    try:
        return construct(loader, root)
    finally:
        loader.dispose()


def _check_graph(root: Node, bounds: Bounds) -> None:
    """Count nodes with aliases expanded (memoised per node, so this is linear in the composed
    graph) and check number scalars; raise ``YAMLLimitError`` at the first excess."""
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


def _children(node: Node, path: tuple):
    if isinstance(node, SequenceNode):
        for index, child in enumerate(node.value):
            yield child, path + (index,)
    elif isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            label = key_node.value if isinstance(key_node, ScalarNode) else "?"
            yield key_node, path + (label,)
            yield value_node, path + (label,)
