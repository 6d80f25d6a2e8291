"""Load and apply the project's JSON Schemas (``schemas/*.schema.json`` at the repository root).

Every record, badge and history row is validated before it is written (issue: "validated with
jsonschema ... before they are written").
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


class SchemaViolation(ValueError):
    """A document does not match its schema. ``str()`` names the document, the JSON path and why."""


@functools.lru_cache(maxsize=None)
def validator(name: str) -> jsonschema.protocols.Validator:
    """The validator for ``schemas/<name>.schema.json`` (draft 2020-12). Raises ``OSError`` if missing."""
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
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
