"""Tool-vectors files checked once per content (regen_cache.Checks): a warm regen does not check an unchanged
file line by line again and writes the same bytes; a changed file is checked again (a damaged one refused); an
entry that is not exactly what the run would write — damaged, foreign, oversized, a FIFO, a link, another
code's — is a miss; and a file read on a pass is still refused at a line that is not one this module writes."""

from __future__ import annotations

import pytest

from harness.pages import regen_cache, tool_vectors
from harness.pages.published_records import RecordError
from harness.pages.regen import regen
from tests.pages.test_input_caches import calls, repo  # noqa: F401 - fixtures
from tests.pages.test_page_cache import published, without_cache
from tests.pages.test_record_verdicts import plant_verdict


@pytest.fixture
def checked(monkeypatch):
    """How many tool-vectors files were checked line by line."""
    return calls(monkeypatch, tool_vectors, "_plain")


def _vectors(root, name: str = "srv"):
    return root / "results" / name / "tool-vectors.json"


def _older(root, name: str = "srv", total: str = "7") -> bytes:
    """``name``'s tool vectors with an older capture in front (``total``: its totalTokens as written)."""
    path = _vectors(root, name)
    held = tool_vectors.read(path, name)
    older = held.vectors[0].line.replace(held.vectors[0].fields["canonicalSha256"], "ab" * 32) \
        .replace(held.vectors[0].fields["date"], "2026-05-01") \
        .replace(f'"totalTokens":{held.vectors[0].fields["totalTokens"]}', f'"totalTokens":{total}')
    path.write_text(tool_vectors.file_text(name, [older] + [v.line for v in held.vectors]), encoding="utf-8")
    return path.read_bytes()


def test_a_warm_regen_checks_no_file_again_and_gives_the_same_bytes(repo, checked):
    regen(repo)  # writes each file (the current record's vector appended)
    regen(repo)  # checks each file as written
    first, count = published(repo), len(checked)
    regen(repo)
    assert count == 2 and len(checked) == count and published(repo) == first


def test_a_changed_file_is_checked_again_and_gives_what_no_cache_gives(repo, checked, tmp_path, monkeypatch):
    regen(repo)
    regen(repo)
    _older(repo)
    count = len(checked)
    regen(repo)
    assert len(checked) == count + 1  # srv's, not ok's
    got = published(repo)
    assert "ab" * 32 in got["results/capture-index.json"].decode()
    assert without_cache(repo, tmp_path, monkeypatch, "empty") == got


def test_a_damaged_file_after_a_good_one_is_refused(repo):
    regen(repo)
    regen(repo)
    _older(repo, total='"7"')
    with pytest.raises(RecordError, match=r"tool-vectors.json:2: totalTokens and toolCount must be whole numbers"):
        regen(repo)


def test_a_pass_reads_the_same_vectors_as_a_check(repo, tmp_path):
    regen(repo)
    _older(repo)
    checks = regen_cache.Checks(tmp_path / "checks")
    checked = tool_vectors.read(_vectors(repo), "srv", checks)
    checks.save()
    kept = tool_vectors.read(_vectors(repo), "srv", regen_cache.Checks(tmp_path / "checks"))
    assert type(checked.vectors) is tuple and type(kept.vectors) is not tuple
    assert kept == checked and kept.text() == checked.text() and len(kept.vectors) == 2
    assert [v.where for v in kept.vectors] == [v.where for v in checked.vectors]
    assert [(v.fields, v["tools"]) for v in reversed(kept.vectors)] == [(v.fields, v["tools"]) for v in checked.vectors[::-1]]


@pytest.mark.parametrize("plant", ["right", "another key", "garbage", "oversized", "fifo", "link", "other code"])
def test_a_damaged_or_foreign_entry_is_never_taken_for_a_pass(repo, tmp_path, monkeypatch, plant):
    regen(repo)
    data = _older(repo, total='"7"')
    where = tmp_path / "checks"
    where.mkdir()
    plant_verdict(where, regen_cache.Checks.key("srv", data), "right" if plant == "other code" else plant, tmp_path)
    if plant == "other code":
        monkeypatch.setattr(regen_cache, "harness_key", lambda: "other code")
    if plant == "right":  # the control: a pass is taken, the file is not checked when read
        held = tool_vectors.read(_vectors(repo), "srv", regen_cache.Checks(where))
        assert len(held.vectors) == 2 and held.vectors[-1].fields["totalTokens"] > 0
        with pytest.raises(RecordError, match=r"tool-vectors.json:2: not a vector line as this harness writes it"):
            held.vectors[0]  # and a line that is not one this module writes is still refused when used
        return
    with pytest.raises(RecordError, match=r"tool-vectors.json:2: totalTokens and toolCount must be whole numbers"):
        tool_vectors.read(_vectors(repo), "srv", regen_cache.Checks(where))
