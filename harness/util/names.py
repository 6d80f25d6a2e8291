"""Server names: the slugs that become ``results/<name>/``, ``badges/<name>.json`` and a
``history.csv`` cell. One rule, checked with ``re.fullmatch`` everywhere a name is accepted (issue
#9, kind 5: ``^…$`` with ``re.match`` lets a final newline through, which then breaks
``history.csv`` for every later run; a 300-character name reaches the filesystem as ENAMETOOLONG).

Two alphabets, both starting with a letter or digit:
  * catalog names (``servers.yaml``): ``a-z``, ``0-9``, ``-``;
  * names given on the command line or to the Action (``measure --name``, the Action's ``name``):
    also ``.`` and ``_``, since they come from repository names.
Both are at most ``MAX_NAME_LENGTH`` characters (a filesystem component is at most 255 bytes;
64 leaves room for suffixes and reads well in a table).
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
    """Whether ``value`` is a catalog entry name (``CATALOG_NAME``, full match, length-limited)."""
    return isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and CATALOG_NAME.fullmatch(value) is not None


def is_result_name(value: object) -> bool:
    """Whether ``value`` may name a results directory (``RESULT_NAME``, full match, length-limited).
    Every catalog name is one."""
    return isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and RESULT_NAME.fullmatch(value) is not None
