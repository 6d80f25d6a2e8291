"""Fixtures shared by the probe's tests: a machine that resolves no names, and one that does."""

from __future__ import annotations

import pytest

from harness.probe import machine_fault


@pytest.fixture
def no_dns(monkeypatch):
    """A machine that resolves none of its control names: the one this harness is measured on."""
    monkeypatch.setenv(machine_fault.DNS_CONTROL_VARIABLE, "control-a.invalid,control-b.invalid")


@pytest.fixture
def working_dns(monkeypatch):
    """A machine that resolves names (``localhost`` as its control name): there a public name that does not
    resolve is the server's business."""
    monkeypatch.setenv(machine_fault.DNS_CONTROL_VARIABLE, "localhost")
