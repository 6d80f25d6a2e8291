"""Keep secret values out of everything the harness writes or prints.

The values of an entry's declared env names and header values are known to the harness while it
runs; a server may echo one into stderr, an error message or even a tool description. Every text
that leaves the probe passes through ``Redactor.text``; a capture that contains a value is
redacted before it is counted, so the published numbers still re-derive from the published bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from harness.probe.environment import DUMMY_PREFIX

MASK = "[redacted]"
MIN_SECRET_LENGTH = 4  # shorter values would mangle ordinary text and are not credentials


class Redactor:
    """Replaces every known secret value with ``[redacted]`` in texts and JSON values."""

    def __init__(self, values: Iterable[str]):
        unique = {v for v in values if v and len(v) >= MIN_SECRET_LENGTH and not v.startswith(DUMMY_PREFIX)}
        self.values = sorted(unique, key=len, reverse=True)

    @classmethod
    def for_names(cls, names: Iterable[str], extra: Iterable[str] = ()) -> "Redactor":
        """A redactor for the host values of env ``names`` plus ``extra`` literal values."""
        return cls([os.environ.get(name, "") for name in names] + list(extra))

    def text(self, value: str | None) -> str | None:
        """``value`` with every secret replaced (``None`` stays ``None``)."""
        if value is None:
            return None
        for secret in self.values:
            value = value.replace(secret, MASK)
        return value

    def json(self, value: object) -> tuple[object, bool]:
        """``(value with secrets replaced in every string and key, whether anything changed)``."""
        if not self.values:
            return value, False
        changed = False

        def walk(node):
            nonlocal changed
            if isinstance(node, str):
                clean = self.text(node)
                changed |= clean != node
                return clean
            if isinstance(node, list):
                return [walk(item) for item in node]
            if isinstance(node, dict):
                return {walk(key): walk(item) for key, item in node.items()}
            return node

        return walk(value), changed
