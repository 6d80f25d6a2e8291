"""Server names, the slugs behind ``results/<name>/`` and ``badges/<name>.json``: ``is_catalog_name``,
``is_result_name`` (always ``fullmatch``: ``re.match`` with ``$`` lets a final newline through).
"""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 64
CATALOG_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
RESULT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")

CATALOG_RULE = f'a slug of lowercase letters, digits and "-", starting with a letter or digit, at most {MAX_NAME_LENGTH} characters'
RESULT_RULE = (f"a slug of lowercase a-z, 0-9, '.', '_', '-', starting with a letter or digit, at most "
               f"{MAX_NAME_LENGTH} characters")


def is_catalog_name(value: object) -> bool:
    return isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and CATALOG_NAME.fullmatch(value) is not None


def is_result_name(value: object) -> bool:
    """Every catalog name is also a result name."""
    return isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and RESULT_NAME.fullmatch(value) is not None
