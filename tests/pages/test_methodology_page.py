"""docs/METHODOLOGY.md: versioned, complete, and its divergence figures match the conformance cases;
every generated page links to it."""

from __future__ import annotations

import json

from harness.core.record import STATUSES
from tests.conftest import REPO, conformance_dir

PAGE = (REPO / "docs" / "METHODOLOGY.md").read_text(encoding="utf-8")


def test_versioned_with_changelog():
    assert "**Methodology 1.0 · page revision 1.**" in PAGE
    assert "## Changelog" in PAGE and "Page revision 1" in PAGE


def test_names_every_status():
    for status in STATUSES:
        assert f"| `{status}` |" in PAGE, status


def test_sections_present():
    for heading in ("## What the number is", "## What the number is not", "## Reproduce it", "## Statuses",
                    "## Retries and the deadline", "## Two launches: measured or dynamic",
                    "## When a whole sweep is withheld (harness fault)", "## Colour bands", "## Trends over time",
                    "## Session-start load", "## Which machine a number applies to", "## Known divergences"):
        assert heading in PAGE, heading
    assert "```js" in PAGE and "```python" in PAGE


def test_divergence_figures_match_conformance_cases():
    folder = conformance_dir("adversarial")
    for case in ("str_nel_u0085.json", "str_bom_inside_string.json", "str_unicode17_letters.json"):
        data = json.loads((folder / case).read_text(encoding="utf-8"))
        row = next(line for line in PAGE.splitlines() if f"`{case}`" in line)
        assert row.endswith(f"| {data['tokens']} | {data['jsTiktokenTokens']} |"), row


def test_every_generated_page_links_here(published):
    root, _, _ = published
    pages = [root / "results/leaderboard.md", root / "docs/index.html", *sorted((root / "docs/servers").glob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        target = "../docs/METHODOLOGY.md" if page.name == "leaderboard.md" else (
            "METHODOLOGY.md" if page.name == "index.html" else "../METHODOLOGY.md")
        assert f'href="{target}"' in text or f"]({target})" in text, page
