"""The project's JSON Schemas (``schemas/``, shipped as package data): ``validator``, ``check``,
``SchemaViolation``. Every record, badge and history row is validated before it is written.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

SCHEMA_DIR: Traversable = importlib.resources.files("harness") / "schemas"


def schema_file(name: str) -> Traversable:
    return SCHEMA_DIR / f"{name}.schema.json"


class SchemaViolation(ValueError):
    """A document does not match its schema."""


@functools.lru_cache(maxsize=None)
def validator(name: str) -> jsonschema.protocols.Validator:
    import jsonschema  # a fifteenth of a second: imported by the first check, not by every command's start

    schema = json.loads(schema_file(name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    # no check_schema here: the shipped schemas are checked against their metaschema by a test
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def check(name: str, document: Any, where: str = "document") -> None:
    """Validate ``document`` against schema ``name``; SchemaViolation lists the errors."""
    errors = sorted(validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{where}: {e.json_path}: {_short(e.message)}" for e in errors[:20]]
        if len(errors) > 20:
            lines.append(f"{where}: ... and {len(errors) - 20} more")
        raise SchemaViolation("\n".join(lines))


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"
