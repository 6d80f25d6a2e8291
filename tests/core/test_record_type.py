"""The typed record (harness.core.record.Record) names exactly the schema's keys, with the same
required set, and every committed record type-checks as far as keys go."""

import json
from pathlib import Path
from typing import get_args, get_type_hints

from harness.core.record import STATUSES, Attempt, Isolation, Record, ResolvedPackage, Status, ToolRow
from harness.probe import status

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schemas" / "measurement.schema.json").read_text())


def _keys(typed) -> tuple[set[str], set[str]]:
    return set(get_type_hints(typed)), set(typed.__required_keys__)


def test_record_keys_are_the_schemas():
    keys, required = _keys(Record)
    assert keys == set(SCHEMA["properties"])
    assert required == set(SCHEMA["required"])


def test_status_values_are_the_schemas():
    assert set(get_args(Status)) == set(SCHEMA["properties"]["status"]["enum"])
    history = json.loads((REPO / "schemas" / "history.schema.json").read_text())
    assert list(STATUSES) == history["properties"]["status"]["enum"]


def test_the_probes_status_names_are_statuses():
    constants = {value for name, value in vars(status).items() if name.isupper() and not name.startswith("_")
                 and isinstance(value, str)}
    assert constants == set(STATUSES)


def test_nested_rows_are_the_schemas():
    props = SCHEMA["properties"]
    for typed, schema in ((ToolRow, props["tools"]["items"]), (Attempt, props["attempts"]["items"]),
                          (Isolation, props["isolation"]), (ResolvedPackage, props["resolvedPackage"])):
        keys, required = _keys(typed)
        assert keys == set(schema["properties"]), typed.__name__
        assert required == set(schema.get("required", [])), typed.__name__


def test_a_committed_record_has_only_known_keys():
    keys, required = _keys(Record)
    records = sorted((REPO / "results").glob("*/measurement.json"))
    assert records
    for path in records:
        record = json.loads(path.read_text())
        assert required <= set(record) <= keys, path


def test_isolation_modes_are_every_schemas_and_every_commands():
    from harness.cli import build_parser
    from harness.core.record import ISOLATION_MODES

    enums = []
    for path in sorted((REPO / "schemas").glob("*.schema.json")):
        text = json.loads(path.read_text())
        stack = [text]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if isinstance(node.get("isolation"), dict) and "enum" in node["isolation"]:
                    enums.append((path.name, node["isolation"]["enum"]))
                if isinstance(node.get("mode"), dict) and "enum" in node["mode"]:
                    enums.append((path.name, node["mode"]["enum"]))
                stack += node.values()
            elif isinstance(node, list):
                stack += node
    assert len(enums) >= 7, enums
    assert all([m for m in enum if m is not None] == list(ISOLATION_MODES) for _, enum in enums), enums
    choices = {}
    for command in ("audit", "measure", "sweep", "cross-check", "capability-probe"):
        sub = build_parser(command)._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        (action,) = [a for a in sub._actions if "--isolation" in a.option_strings]
        choices[command] = set(action.choices) - {"auto"}
    assert all(found == set(ISOLATION_MODES) for found in choices.values()), choices
