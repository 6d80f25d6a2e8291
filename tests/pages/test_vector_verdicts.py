"""Tool-vectors files checked once per content (regen_cache.Checks): a warm regen does not check an unchanged
file line by line again and writes the same bytes; a changed file is checked again (a damaged one refused); an
entry that is not exactly what the run would write — damaged, foreign, oversized, a FIFO, a link, another
code's — is a miss; and a file read on a pass is still refused at a line that is not one this module writes."""

from __future__ import annotations

import pytest

from harness.pages import regen_cache, tool_vectors
from harness.pages.published_records import RecordError
from harness.pages.regen import regen
from tests.pages import builders as b
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


def test_a_warm_regen_checks_no_file_again_and_gives_the_same_bytes(repo, checked, tmp_path, monkeypatch):
    regen(repo)  # writes each file (the current record's vector appended): the text it writes passed as written
    first = published(repo)
    regen(repo)
    regen(repo)
    assert len(checked) == 0 and published(repo) == first
    monkeypatch.setattr(tool_vectors.VectorHistory, "checks", None)  # (a history read with no verdicts to add to)
    regen(repo)
    assert len(checked) == 0 and published(repo) == first
    assert without_cache(repo, tmp_path, monkeypatch, "empty") == first and len(checked) == 2


def test_a_file_appended_to_is_not_checked_again_and_gives_what_no_cache_gives(repo, checked, tmp_path, monkeypatch):
    regen(repo)
    older = _older(repo)  # checked at the next read, then its current record's vector appended
    b.write_record(repo, b.measured("srv", [b.tool("alpha"), b.tool("gamma")]))
    b.write_history(repo, ["2026-06-01,srv,900,1,measured,host", "2026-06-01,ok,40,1,measured,host"])
    count = len(checked)
    regen(repo)
    assert len(checked) == count + 1 and _vectors(repo).read_bytes() != older
    written = published(repo)
    regen(repo)
    assert len(checked) == count + 1 and published(repo) == written
    assert without_cache(repo, tmp_path, monkeypatch, "empty") == written


# Tool names a record may carry: escaped and raw characters, the line's own punctuation, a workflow command.
NAMES = ["alpha", "ünïcødé", "a\u2028b", "line\nbreak", 'q"uote', "]},{", "##[error]x", "\x85\x7f", "tab\there", "\\",
         "\ud800"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("total", [None, 10**15, 0])
def test_advance_adds_a_verdict_only_for_a_text_the_check_passes(repo, tmp_path, name, total):
    """The verdict :func:`advance` adds is the check's own: given exactly when the line-by-line check passes the
    new text (a total of sixteen digits, as a re-derived record may say, is not in the form read takes), and for
    those bytes."""
    regen(repo)
    record = b.measured("srv", [b.tool(name), b.tool("beta")], measuredAt="2026-12-07T12:00:00.000Z")
    if total is not None:
        record = {**record, "totalTokens": total}
    checks = regen_cache.Checks(tmp_path / "checks")
    held = tool_vectors.read(_vectors(repo), "srv", checks)
    grown = tool_vectors.advance(held, record, "results/srv/measurement.json", rederived=True)
    text = grown.text()
    header = len(text.split("\n", 1)[0]) + 1
    passes = tool_vectors._plain(text, header, len(text) - 4, "p") is not None
    assert checks.passed("srv", text.encode("utf-8")) == passes
    assert passes == (total != 10**15) and len(grown.vectors) == 2
    checks.save()
    _vectors(repo).write_text(text, encoding="utf-8")
    kept = tool_vectors.read(_vectors(repo), "srv", regen_cache.Checks(tmp_path / "checks"))
    assert (type(kept.vectors) is not tuple) == passes
    assert kept == tool_vectors.read(_vectors(repo), "srv") and kept.text() == text


def test_a_file_not_in_the_fast_form_adds_no_verdict(repo, tmp_path):
    regen(repo)
    path = _vectors(repo)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"status":', '"status" :', 1), encoding="utf-8")  # by hand: still a valid vector
    checks = regen_cache.Checks(tmp_path / "checks")
    held = tool_vectors.read(path, "srv", checks)
    grown = tool_vectors.advance(held, b.measured("srv", [b.tool("gamma")], measuredAt="2026-12-07T12:00:00.000Z"),
                                 "results/srv/measurement.json")
    assert len(grown.vectors) == 2 and held.checks is None
    assert not checks.passed("srv", grown.text().encode("utf-8"))


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


def test_every_verdict_advance_adds_is_for_the_trimmed_text_it_returns(tmp_path, monkeypatch):
    """Past :data:`MAX_VECTORS` captures, each verdict is on the text of the history advance returns (the oldest
    vector dropped), never on the longer text the check refuses."""
    given = []
    monkeypatch.setattr(regen_cache.Checks, "remember", lambda self, label, data: given.append((label, data)))
    history = tool_vectors.read(tmp_path / "tool-vectors.json", "srv", regen_cache.Checks(tmp_path / "checks"))
    for i in range(tool_vectors.MAX_VECTORS + 2):
        record = b.measured("srv", [b.tool(f"t{i}")], measuredAt=f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}T12:00:00.000Z")
        history = tool_vectors.advance(history, record, "results/srv/measurement.json", rederived=True)
        assert given[-1] == ("srv", history.text().encode("utf-8"))
    assert len(given) == tool_vectors.MAX_VECTORS + 2 and len(history.vectors) == tool_vectors.MAX_VECTORS
    for _, data in given:
        text = data.decode("utf-8")
        assert tool_vectors._plain(text, len(text.split("\n", 1)[0]) + 1, len(text) - 4, "p") is not None
