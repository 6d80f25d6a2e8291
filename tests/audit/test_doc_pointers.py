"""Every pointer from the audit's docs and client records into docs/METHODOLOGY.md names a section
that exists there, so a reader who follows one finds what it promises."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REPO

METHODOLOGY = (REPO / "docs" / "METHODOLOGY.md").read_text(encoding="utf-8")
HEADINGS = {m.group(1).strip() for m in re.finditer(r"^#{2,4} (.+)$", METHODOLOGY, re.MULTILINE)}
RECORDS = json.loads((REPO / "harness" / "audit" / "data" / "client-records.json").read_text(encoding="utf-8"))


def _record_sections() -> list[str]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("address") == "docs/METHODOLOGY.md":
                found.append(node["section"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(RECORDS)
    return found


def _audit_doc_sections() -> list[str]:
    text = (REPO / "docs" / "AUDIT.md").read_text(encoding="utf-8")
    text = " ".join(text.split())  # a quoted name may wrap across lines
    return [name for quoted in re.findall(r"methodology's sections? ((?:\"[^\"]+\"(?:,| and| or)? ?)+)", text)
            for name in re.findall(r"\"([^\"]+)\"", quoted)]


@pytest.mark.parametrize("section", sorted(set(_record_sections() + _audit_doc_sections())))
def test_each_pointer_names_a_section_that_exists(section):
    assert section in HEADINGS, f"docs/METHODOLOGY.md has no section {section!r}"


def test_the_pointers_were_found():
    assert _record_sections() and len(_audit_doc_sections()) >= 3
