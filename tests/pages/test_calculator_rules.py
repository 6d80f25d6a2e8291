"""The calculator page's committed rule data equals what the audit computes, so the two cannot drift."""

from harness.audit.calculator_rules import file_text
from harness.pages.calculator import RULES_FILE


def test_committed_rules_equal_the_audits():
    assert RULES_FILE.read_text(encoding="utf-8") == file_text(), (
        "run: python -m harness.audit.calculator_rules")


def test_a_changed_rule_is_seen(monkeypatch):
    from harness.audit import readers
    monkeypatch.setattr(readers, "MAX_CONFIG_BYTES", readers.MAX_CONFIG_BYTES + 1)
    assert RULES_FILE.read_text(encoding="utf-8") != file_text()
