"""The fast check of a new tool vector (``tool_vectors._plainly_valid``) against the schema it restates
(schemas/tool-vectors.schema.json): documents made at the schema's edges, read from the schema itself, so
a rule added to one and not the other shows here. The fast check may refuse what the schema accepts (the
schema then decides), never accept what it refuses."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.core.record import ISOLATION_MODES, STATUSES
from harness.pages import tool_vectors as tv
from harness.pages.regen import regen
from harness.util import schemas
from tests.pages import builders as b

SCHEMA = json.loads(schemas.schema_file("tool-vectors").read_text(encoding="utf-8"))
VECTOR = SCHEMA["$defs"]["vector"]
SERVER = "my-server.v2_x"
GOOD = {"date": "2026-11-30", "canonicalSha256": "0123456789abcdef" * 4, "isolation": "host", "status": "measured",
        "totalTokens": 120, "toolCount": 2, "tools": [["alpha", 70, 20, 40], ["beta", 50, 10, 30]]}

# One value of every JSON type, and the values a Python check confuses with them (bool is an int, 1.0 equals 1).
OTHERS: list[Any] = [None, True, False, 0, 1, -1, 0.0, 1.0, 1.5, -0.0, 2 ** 64, "", "x", "1", [], [1], ["x"], {},
                     {"a": 1}]
# Every word the harness has for a status or an isolation: one the code gains and the schema does not is a drift.
NAMED = [*STATUSES, *ISOLATION_MODES, *tv.ISOLATIONS, *tv.NUMBERED]
# A character at each side of the patterns' ranges, and look-alikes outside ASCII ("\d" takes "٣" and "２").
CHARACTERS = ["0", "1", "2", "3", "9", "a", "f", "g", "z", "A", "F", "-", "_", ".", "/", " ", "\n", "\t", "٣", "２",
              "é", "ß", "\u0130", "\ud800", "\x00"]


def _strings(good: str) -> Iterator[str]:
    """``good`` with each character replaced by each of :data:`CHARACTERS`, one shorter and longer at both ends,
    and with white space around it."""
    # a long string is one repeated range (the hash): its ends and middle stand for the rest
    for at in range(len(good)) if len(good) <= 16 else (0, 1, len(good) // 2, len(good) - 2, len(good) - 1):
        for c in CHARACTERS:
            yield good[:at] + c + good[at + 1:]
    for c in CHARACTERS:
        yield c + good
        yield good + c
    yield from (good[1:], good[:-1], "", good.upper(), f" {good}", f"{good}\n", f"{good}\r\n", good * 2)


def _values(schema: dict, good: Any) -> Iterator[Any]:
    """Values at the edges of property ``schema`` (whose valid value ``good`` is): every other JSON type, each
    member of an enum and its near misses, strings around a pattern, bounds ±1, array lengths ±1 and each item's
    own edges."""
    yield from copy.deepcopy(OTHERS)
    if "enum" in schema:
        yield from NAMED
    for member in schema.get("enum", []) + ([schema["const"]] if "const" in schema else []):
        yield member
        if isinstance(member, str):
            yield from (member.upper(), member.title(), f"{member} ", f"{member}\n", member[:-1], f"{member}s")
    if isinstance(good, str):
        yield from _strings(good)
    if "minimum" in schema:
        least = schema["minimum"]
        yield from (least - 1, least, least + 1, float(least), float(least + 1), 2 ** 63, 2 ** 63 - 1, -(2 ** 63))
    if schema.get("type") == "array":
        yield from _arrays(schema, good)


def _arrays(schema: dict, good: list) -> Iterator[list]:
    if "prefixItems" in schema:  # a per-tool row: each place at its own edges, and lengths around the bounds
        for at, place in enumerate(schema["prefixItems"]):
            for value in _values(place, good[at]):
                yield [*good[:at], value, *good[at + 1:]]
        yield from ([], good[:-1], [*good, 0], [*good, "x"], good[:schema["minItems"] - 1],
                    [*good, *good][:schema["maxItems"] + 1])
        return
    yield []
    yield [*good, *good]
    for value in _values(schema["items"], good[0]):  # each row's edges after a good row: every row is checked
        yield [good[0], value]
    yield [good[0], None]


def vectors() -> Iterator[Any]:
    """:data:`GOOD` with one property at a time at its edges, each required property missing, and others added;
    values of other types in its place."""
    yield from copy.deepcopy(OTHERS)
    for name, schema in VECTOR["properties"].items():
        for value in _values(schema, GOOD[name]):
            yield {**GOOD, name: value}
    for name in VECTOR["required"]:
        yield {k: v for k, v in GOOD.items() if k != name}
    for extra in ("extra", "Date", "tools ", ""):
        yield {**GOOD, extra: 1}
    yield {**GOOD, "tools": [], "toolCount": 0, "totalTokens": 0}


def servers() -> Iterator[Any]:
    yield from _strings(SERVER)
    yield from ("a", "0", "a" * 300, "-a", ".a", "_a", "a/b", "../a", "ａ", "srv\n")


def document(server: Any, vector: Any) -> dict:
    return {"method": tv.METHOD, "server": server, "bound": tv.MAX_VECTORS, "vectors": [vector]}


def test_the_fast_check_accepts_nothing_the_schema_refuses():
    validator = schemas.validator("tool-vectors")
    cases = [(SERVER, v) for v in vectors()] + [(s, GOOD) for s in servers()]
    accepted = refused = 0
    for server, vector in cases:
        fast = tv._plainly_valid(server, vector)
        valid = validator.is_valid(document(server, vector))
        assert valid or not fast, f"the fast check accepts what the schema refuses: server {server!r}, {vector!r}"
        accepted += fast
        refused += not valid
    # both sides are reached: the check is no constant answer, and the edges are edges
    assert accepted > 100 and refused > 1000, (accepted, refused)


def _sitting(root: Path, day: str, more: bool) -> None:
    """Records of several shapes (hostile tool names, no tools, each isolation, both numbered statuses);
    ``more`` changes some captures, so a second sitting appends vectors to the files of the first."""
    names = ["lone \ud800 surrogate", "line\nbreak", "ünï", "0", "false", "{\"k\":1}", "名前", ""]
    tools = [b.tool(n, "d" * i) for i, n in enumerate(names)]
    stamp = f"{day}T12:00:00.000Z"
    b.write_catalog(root, [b.entry(n) for n in ("alpha", "beta-v2", "gamma-x", "delta-0")])
    b.write_record(root, b.measured("alpha", tools[:2 + more], measuredAt=stamp))
    b.write_record(root, b.measured("beta-v2", tools, status="dynamic", measuredAt=stamp, isolation=b.DOCKER))
    b.write_record(root, b.measured("gamma-x", tools[5:] if more else [], measuredAt=stamp,
                                    isolation={**b.HOST, "mode": "sandbox" if more else "host"}))
    b.write_record(root, b.failed("delta-0", "timeout", ["no answer"], measuredAt=stamp))


def _published(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_regen_writes_the_same_bytes_when_the_schema_decides_every_vector(tmp_path, monkeypatch):
    plainly, verdicts = tv._plainly_valid, list[bool]()

    def counted(server: str, on_file: dict) -> bool:
        verdicts.append(plainly(server, on_file))
        return verdicts[-1]

    published = []
    for check in (counted, lambda server, on_file: False):
        monkeypatch.setattr(tv, "_plainly_valid", check)
        root = tmp_path / str(len(published)) / "repo"
        root.mkdir(parents=True)
        for day, more in (("2026-11-30", False), ("2026-12-07", True)):
            _sitting(root, day, more)
            regen(root)
        published.append(_published(root))
    assert verdicts and all(verdicts)  # the fast check took every vector of the first tree
    assert published[0] == published[1]
    assert sum(name.endswith("tool-vectors.json") for name in published[0]) == 3
    assert published[0]["results/alpha/tool-vectors.json"].count(b"\n") == 4  # the second sitting appended
