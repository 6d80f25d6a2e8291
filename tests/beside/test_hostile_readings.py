"""Untrusted text inside the run files (a tool name a server chose, a model id, an error) reaches
the pages only escaped: no markup, no broken table, no raw HTML (the project's escaping
rules)."""

from __future__ import annotations

from harness.readings import store
from harness.pages.regen import regen
from tests.beside import repo
from tests.hostile import assert_file_safe
from tests.pages import builders as b

EVIL = "<script>alert(1)</script>|*em*[x](javascript:alert(1))\n## heading\u202e"


def test_hostile_names_and_model_are_inert(tmp_path):
    root = tmp_path / "repo"
    records = repo.build(root)
    alpha = records["alpha"]
    store.write(root, "divergence", {"method": "tools-delta/v1", "rows": [
        {"server": "alpha", "model": EVIL, "countedAt": "2026-11-30", "canonicalSha256": alpha["canonicalSha256"],
         "totalTokens": alpha["totalTokens"], "mappedTokens": 10, "withToolsTokens": 50, "withoutToolsTokens": 8,
         "claudeTokens": 42}]})
    store.write(root, "capability-probe", {"method": "capability-probe/v1", "declared": {}, "answers": {}, "rows": [
        {"server": "alpha", "probedAt": "2026-11-30", "isolation": "host", "gained": [{"name": EVIL, "tokens": 9}],
         "lost": [{"name": EVIL, "tokens": 1}], "changed": [], "deltaTokens": 8,
         "withoutCapabilities": {"totalTokens": alpha["totalTokens"], "toolCount": 2, "canonicalSha256": alpha["canonicalSha256"]},
         "withCapabilities": {"totalTokens": alpha["totalTokens"] + 8, "toolCount": 2, "canonicalSha256": "f" * 64}}]})
    regen(root)
    for kind in ("divergence", "capability-probe"):  # the run files are published too: no raw bidi in them
        assert_file_safe(store.path_for(root, kind))
    for path in (root / "docs/servers/alpha.md", root / "results/leaderboard.md"):
        text = path.read_text(encoding="utf-8")
        assert "<script" not in text and "](javascript" not in text and "\n## heading" not in text and "\u202e" not in text
        for table in b.md_tables(text):
            assert len({len(row) for row in table}) == 1, path
    page = (root / "docs/servers/alpha.md").read_text(encoding="utf-8")
    assert "**42 tokens** added" in page and "&lt;script&gt;" in page
    from tests.pages.builders import without_own_scripts

    html = without_own_scripts((root / "docs/index.html").read_text(encoding="utf-8"))
    assert "<script" not in html  # no script but the dashboard's own
