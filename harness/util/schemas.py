"""Load and apply the project's JSON Schemas (``schemas/*.schema.json`` at the repository root).

Every record, badge and history row is validated before it is written (issue: "validated with
jsonschema ... before they are written").

The schemas are package data (issue #15): the top-level ``schemas/`` folder is the source, and
``harness/schemas`` links to it, so a checkout, an editable install and an installed wheel (which
holds real copies) all find them through ``importlib.resources`` — from any working directory.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from importlib.resources.abc import Traversable

import jsonschema

SCHEMA_DIR: Traversable = importlib.resources.files("harness") / "schemas"


def schema_file(name: str) -> Traversable:
    """``schemas/<name>.schema.json`` as shipped with the package (a ``pathlib.Path`` for any
    installed or checked-out copy; ``open()`` and ``read_text()`` work on it)."""
    return SCHEMA_DIR / f"{name}.schema.json"


class SchemaViolation(ValueError):
    """A document does not match its schema. ``str()`` names the document, the JSON path and why."""


@functools.lru_cache(maxsize=None)
def validator(name: str) -> jsonschema.protocols.Validator:
    """The validator for ``schemas/<name>.schema.json`` (draft 2020-12). Raises ``OSError`` if missing."""
    schema = json.loads(schema_file(name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    # no check_schema here: the shipped schemas are checked against their metaschema by a test
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check(name: str, document: object, where: str = "document") -> None:
    """Validate ``document`` against schema ``name``.

    Raises ``SchemaViolation`` listing every error as ``<where>: <json path>: <message>``.
    """
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{where}: {e.json_path}: {_short(e.message)}" for e in errors[:20]]
        if len(errors) > 20:
            lines.append(f"{where}: ... and {len(errors) - 20} more")
        raise SchemaViolation("\n".join(lines))


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"
