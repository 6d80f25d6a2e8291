"""Regenerate everything published from what is on disk: ``regen(repo_root) -> list[Path]``.

Inputs (repository-relative): ``servers.yaml`` (the catalog: which entries exist), every
``results/<name>/measurement.json`` of a catalog entry, and ``history.csv``. Outputs: the files
listed in :mod:`harness.publish.site` — leaderboard (md, csv), one page, sparkline and trend chart
per catalog entry, and the dashboard. Server pages, sparklines and trend charts of names no longer
in the catalog are removed.

Every output is computed before anything is written, so bad input (``CatalogError``,
``RecordError``, ``HistoryError``) leaves the published files exactly as they were. Files are then
written by :func:`harness.util.atomic.write_many`: each atomically (old bytes or new, never a
mix — the guarantee of ``harness.util.atomic``), all staged and flushed to disk with one sync
before any is renamed into place; a file whose bytes are already right is left untouched. Same inputs → byte-identical outputs: nothing depends on the clock, the machine or
dictionary order (methodology, "Trends over time"; issue #5, determinism).
"""

from __future__ import annotations

from pathlib import Path

from harness.db.catalog import load_catalog
from harness.util import atomic
from harness.publish import dashboard, leaderboard_csv, leaderboard_md, readings, server_html, server_page, site, svg
from harness.publish.board import build_rows
from harness.db.history import by_server, read_history
from harness.publish.records import load_records
from harness.publish.series import comparable

CATALOG = "servers.yaml"
_OWNED = ((site.SERVER_DIR, ".md"), (site.SERVER_DIR, ".html"), (site.SPARK_DIR, ".svg"), (site.TREND_DIR, ".svg"))


def render_all(repo_root: Path) -> dict[str, str]:
    """``{repository-relative path: file text}`` of everything published, from the inputs on disk."""
    root = Path(repo_root)
    catalog = load_catalog(root / CATALOG)
    names = [e.name for e in catalog.entries]
    records = load_records(root / site.RESULTS, names)
    history = by_server(read_history(root / site.HISTORY))
    rows = readings.attach(build_rows(catalog, records), root)  # beside the headline (issue #14)
    series = {name: comparable(history.get(name, [])) for name in names}
    sparks = {name: svg.sparkline(name, series[name]) for name in names}
    outputs = {site.LEADERBOARD_MD: leaderboard_md.render(rows),
               site.LEADERBOARD_CSV: leaderboard_csv.render(rows),
               site.DASHBOARD: dashboard.render(rows, series, sparks)}
    for row in rows:
        outputs[site.server_page(row.name)] = server_page.render(row, series[row.name])
        outputs[site.sparkline(row.name)] = sparks[row.name]
        outputs[site.trend(row.name)] = svg.trend_chart(row.name, series[row.name])
    outputs.update(server_html.pages(outputs))  # after every section is in: the HTML renders the final Markdown
    return outputs


def regen(repo_root: Path) -> list[Path]:
    """Rewrite everything published under ``repo_root``; return the output paths, sorted."""
    root = Path(repo_root)
    outputs = render_all(root)
    atomic.write_many({root / rel: text.encode("utf-8") for rel, text in outputs.items()})
    _remove_stale(root, {Path(rel) for rel in outputs})
    return sorted(root / rel for rel in outputs)


def _remove_stale(root: Path, keep: set[Path]) -> list[Path]:
    """Delete generated per-entry files whose entry left the catalog; return what was removed."""
    removed = []
    for folder, suffix in _OWNED:
        directory = root / folder
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if path.is_file() and path.suffix == suffix and path.relative_to(root) not in keep:
                path.unlink()
                removed.append(path)
    return removed
