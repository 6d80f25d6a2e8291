"""Redaction of a config's worth of env values stays small and fast: the search tables are built
once, on first use, and sized before they are built, whatever the values add up to (300 KB of env
values once took minutes and 700 MB). Memory is measured with tracemalloc; what must still be
redacted — every value whole, a run of any short key in every encoding — still is."""

from __future__ import annotations

import base64
import secrets
import tracemalloc

import pytest

from harness.audit.measuring import redactor_for
from harness.audit.model import Entry
from harness.probe.redact import MASK, MAX_RUNS, Secrets

pytestmark = pytest.mark.timeout(300)
PEAK_BYTES = 160 * 1024 * 1024


def _values(count: int, size: int) -> list[str]:
    return [secrets.token_urlsafe(size)[:size] for _ in range(count)]


def _peak(work):
    tracemalloc.start()
    try:
        return work(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# Each spends seconds of CPU on 300 kB of values: one shape in the fast loop, every shape in the full suite.
@pytest.mark.parametrize("count, size", [(300, 1000), *(pytest.param(*shape, marks=pytest.mark.slow)
                                                     for shape in [(3000, 100), (30, 10_000), (1, 300_000)])])
def test_300_kb_of_values_builds_small_tables_and_still_redacts(count, size):
    values = _values(count, size)
    key = "sk-live-" + secrets.token_hex(12)  # a short key beside them keeps every spelling
    found = Secrets(values + [key])
    probe = " | ".join([values[-1][3:40], key[2:14], key.encode().hex(), base64.b64encode(key.encode()).decode()])
    cleaned, peak = _peak(lambda: found.text(probe))
    assert peak < PEAK_BYTES, f"{peak:,} bytes"
    assert len(found._runs) <= MAX_RUNS + 64
    assert values[-1][3:40] not in cleaned and key[2:14] not in cleaned and key.encode().hex() not in cleaned
    assert cleaned.count(MASK) >= 4, cleaned
    assert found.text(values[count // 2]) == MASK  # every value whole, indexed or not


def test_joining_sets_builds_nothing_until_used():
    parts = [Secrets(_values(10, 100)) for _ in range(50)]
    joined = parts[0]
    for part in parts[1:]:
        joined = joined | part
    assert all(p._tables is None for p in parts) and joined._tables is None
    assert joined.text(parts[-1].values[0]) == MASK and joined._tables is not None


@pytest.mark.slow
def test_a_config_of_many_entries_gets_one_redactor_in_bounded_memory():
    entries = [Entry(name=f"s{i}", client="cursor", source="x", scope="user", transport="stdio",
                     env_values={f"K{j}": v for j, v in enumerate(_values(10, 100))}) for i in range(300)]
    def build():
        redactor = redactor_for(entries)
        return redactor, redactor.text("a value: " + entries[7].env_values["K3"])

    (redactor, cleaned), peak = _peak(build)
    assert len(redactor.values) == 3000 and cleaned == "a value: " + MASK and peak < PEAK_BYTES
