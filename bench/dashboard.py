"""Benchmark: the dashboard with thousands of rows, in Chromium.

Synthetic rows (default 5,000: 80% measured with 12 tools, the rest spread over failures and
not-measured-here statuses) are rendered by ``harness.pages.dashboard.render`` and opened in the
system Chromium. Timed in the page: load until the ranking is drawn (``load`` event, the script
runs before it, so the page answers input from then on: its time to interactive), and one search
keystroke (filter and redraw). Baseline, same run, same rows: a
plain static ``<table>`` holding every row as server-rendered HTML (what the page did before it
drew from embedded JSON), timed to ``load``. Printed: each time and the ratio to the baseline's
load. Also the Python render time and both pages' weight (bytes and gzip bytes).

Run: ``.venv/bin/python bench/dashboard.py [--rows 5000] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import gzip
import html
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.db.catalog import Entry  # noqa: E402
from harness.db.history import HistoryRow  # noqa: E402
from harness.pages import dashboard  # noqa: E402
from harness.pages.board import Row  # noqa: E402
from harness.pages.series import comparable  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
FAILURES = ("startup-failure", "timeout", "auth-required", "unreachable", "not-applicable")


def rows(count: int) -> tuple[list[Row], dict]:
    rng = random.Random(7)
    out, series = [], {}
    for i in range(count):
        name = f"server-{i:05d}"
        entry = Entry(name=name, command=f"npx -y pkg-{i}", category=rng.choice(["community", "vendor-official"]))
        if rng.random() < 0.8:
            tokens = rng.randint(50, 40_000)
            tools = [{"name": f"tool_{i}_{k}", "tokens": tokens // 12} for k in range(12)]
            record = {"status": "measured", "tools": tools, "measuredAt": "2026-11-30T00:00:00Z"}
            out.append(Row(entry, "measured", record, tokens=tokens, tool_count=12, largest=(tools[0]["name"], tokens // 12)))
            history = [HistoryRow(f"2026-11-{d:02d}", name, tokens + d, 12, "measured", "host") for d in (16, 23, 30)]
            series[name] = comparable(history)
        else:
            status = rng.choice(FAILURES)
            out.append(Row(entry, status, {"status": status, "notes": ["exited with code 1 during initialize"]},
                           notes=("exited with code 1 during initialize",)))
    ranked = sorted((r for r in out if r.tokens is not None), key=lambda r: -r.tokens)
    ranks = {r.name: n for n, r in enumerate(ranked, 1)}
    return [Row(r.entry, r.status, r.record, ranks.get(r.name), r.tokens, r.tool_count, r.largest, None, r.notes)
            for r in out], series


def static_table(board: list[Row]) -> str:
    cells = "".join(f"<tr><td>{r.rank or ''}</td><td><a href=\"servers/{html.escape(r.name)}.html\">{html.escape(r.name)}</a>"
                    f"</td><td>{r.status}</td><td>{r.tokens or ''}</td><td>{r.tool_count or ''}</td>"
                    f"<td>{html.escape(r.largest[0]) if r.largest else ''}</td></tr>" for r in board)
    return f"<!DOCTYPE html><html><body><table><tbody>{cells}</tbody></table></body></html>"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    board, series = rows(args.rows)
    started = time.perf_counter()
    page_text = dashboard.render(board, series)
    render_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as driver:
        new, old = Path(tmp) / "index.html", Path(tmp) / "static.html"
        new.write_text(page_text, encoding="utf-8")
        old.write_text(static_table(board), encoding="utf-8")
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        loads, searches, statics = [], [], []
        for _ in range(args.reps):
            for path, into in ((old, statics), (new, loads)):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(path.as_uri())
                page.wait_for_load_state("load")
                into.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
                if path is new:
                    assert page.locator("#leaderboard tbody tr").count() > 0
                    searches.append(page.evaluate("""() => { const box = document.getElementById('filter-text');
                        const t = performance.now(); box.value = 'server-01'; box.dispatchEvent(new Event('input'));
                        return performance.now() - t; }"""))
                page.close()
        browser.close()
    base = statistics.median(statics)
    weight, base_weight = _weight(page_text), _weight(static_table(board))
    print(f"rows: {args.rows:,}; Python render {render_s * 1000:.0f} ms; medians of {args.reps} loads each")
    print(f"page weight: dashboard {weight[0] / 1e6:.2f} MB ({weight[1] / 1e6:.2f} MB gzip), baseline "
          f"{base_weight[0] / 1e6:.2f} MB ({base_weight[1] / 1e6:.2f} MB gzip); ratio {weight[0] / base_weight[0]:.2f} "
          f"({weight[1] / base_weight[1]:.2f} gzip)")
    print(f"baseline (static table of every row) time to interactive (load): {base:.0f} ms")
    print(f"dashboard time to interactive (load, ranking drawn):           {statistics.median(loads):.0f} ms  "
          f"ratio {statistics.median(loads) / base:.2f}")
    print(f"one search keystroke (filter + redraw):                        {statistics.median(searches):.1f} ms  "
          f"ratio {statistics.median(searches) / base:.3f}")


def _weight(text: str) -> tuple[int, int]:
    """(bytes, gzip bytes) of a page: what is stored, what a server sending it compressed sends."""
    data = text.encode("utf-8")
    return len(data), len(gzip.compress(data, 9))


if __name__ == "__main__":
    main()
