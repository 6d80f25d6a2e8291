"""Every shipped schema is a valid schema of the draft it names, so validating with it needs no check."""

from __future__ import annotations

import json

import jsonschema
import pytest

from harness.util import schemas

NAMES = sorted(p.name.removesuffix(".schema.json") for p in schemas.SCHEMA_DIR.iterdir()
               if p.name.endswith(".schema.json"))


def test_the_schemas_are_found():
    assert {"measurement", "badge", "servers", "history"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_is_valid_against_its_metaschema(name):
    schema = json.loads(schemas.schema_file(name).read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema).check_schema(schema)
    assert schemas.validator(name).schema == schema


def test_a_broken_schema_is_caught_by_the_metaschema_check():
    broken = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "no-such-type"}
    with pytest.raises(jsonschema.SchemaError):
        jsonschema.validators.validator_for(broken).check_schema(broken)
