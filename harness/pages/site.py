"""Links between published files (their paths: :mod:`harness.util.published`).

    results/leaderboard.md, results/leaderboard.csv     the leaderboard
    docs/servers/<name>.md                              one page per catalog entry
    docs/servers/<name>.html                            the same page as HTML (what GitHub Pages serves)
    docs/sparklines/<name>.svg                          small trend picture (leaderboard, dashboard)
    docs/trends/<name>.svg                              larger trend chart (server page)
    docs/index.html                                     the dashboard (GitHub Pages root)
    docs/calculator.html                                the setup calculator
    docs/METHODOLOGY.md                                 hand-written; every generated page links it
    results/<name>/tool-vectors.json                    per-tool token vectors (cost-regression/v1)
    results/regressions.md, results/regressions.json    cost movement (cost-regression/v1)
    results/capture-index.json                          capture index (capture-index/v1)
    results/tool-shape.json                             tool-shape baseline (tool-shape/v1)

All links are relative, so the same files work on GitHub, on GitHub Pages and from a checkout.
"""

from __future__ import annotations

import functools
import posixpath

from harness.util.published import (  # noqa: F401  re-exported: pages address files through site
    LEADERBOARD_MD, LEADERBOARD_CSV, DASHBOARD, CALCULATOR, METHODOLOGY, SERVER_DIR, SPARK_DIR, TREND_DIR, HISTORY, RESULTS, REGRESSIONS_MD, REGRESSIONS_JSON, CAPTURE_INDEX, TOOL_SHAPE, server_page, server_html, sparkline, trend, record, tool_vectors)

METHODOLOGY_LABEL = "methodology 1.0"
COST_MOVEMENT_ANCHOR = "cost-movement"  # the "## Cost movement" heading of a server page


@functools.lru_cache(maxsize=65536)
def link(from_file: str, to_file: str) -> str:
    """Relative link from one published file to another (both repository-relative, POSIX)."""
    return posixpath.relpath(to_file, posixpath.dirname(from_file) or ".")
