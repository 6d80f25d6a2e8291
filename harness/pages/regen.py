"""Regenerate everything published from what is on disk: :func:`regen`, :func:`render_all`;
:func:`regen_after_publish` also brings ``results/releases.json`` up to date from git first.

Rules: docs/PAGES.md, "Regen".
"""

from __future__ import annotations

import contextlib
import copyreg
import gc
import hashlib
import io
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.core.record import Record
from harness.db.catalog import Catalog, load_catalog
from harness.util import atomic, forkpool, published, untrusted
from harness.pages import (cache_shards, calculator, dashboard, leaderboard, published_records,
                             readings, regen_cache, regressions, releases, server_html, server_page,
                             svg, tool_shape, tool_vectors)
from harness.pages.backfill import BackfillError
from harness.pages.board import Row, build_rows
from harness.db.history import HistoryRow, by_server
from harness.pages.published_records import RecordError, load_records
from harness.pages.series import Series, comparable
from harness.pages.tool_vectors import VectorHistory

_OWNED = ((published.SERVER_DIR, ".md"), (published.SERVER_DIR, ".html"), (published.SPARK_DIR, ".svg"), (published.TREND_DIR, ".svg"))


@dataclass(frozen=True)
class Loaded:
    """The catalog and its entries' records as read from disk, for a caller that has read them already."""

    catalog: Catalog
    records: dict[str, Record]
    history: _History | None = None  # read while the records re-derived (None: read when rendering)

    @classmethod
    def read(cls, root: Path) -> Loaded:
        passed = regen_cache.Catalogs(regen_cache.folder(Path(root), "catalog"))
        catalog = load_catalog(Path(root) / published.CATALOG, passed=passed)
        passed.save()
        history = _History(Path(root))
        return cls(catalog, load_records(Path(root) / published.RESULTS, [e.name for e in catalog.entries],
                                         _verdicts(Path(root)), meanwhile=history.read), history)


class _History:
    """``history.csv``'s rows by server, read ahead (:meth:`read`, raising nothing); :meth:`rows` gives them,
    or raises what reading them raised, where a read there would have."""

    def __init__(self, root: Path):
        self._root = root
        self._read: tuple[dict[str, list[HistoryRow]] | None, Exception | None] | None = None

    def read(self) -> None:
        try:
            with _no_cyclic_gc():
                self._read = _read_history(self._root), None
        except Exception as exc:  # noqa: BLE001 - raised by rows(), after the records' errors
            self._read = None, exc

    def rows(self) -> dict[str, list[HistoryRow]]:
        if self._read is None:
            return _read_history(self._root)
        rows, error = self._read
        if error is not None:
            raise error
        assert rows is not None
        return rows


def _read_history(root: Path) -> dict[str, list[HistoryRow]]:
    """The rows of ``history.csv`` by server (kept in the regen cache: ``regen_cache.Histories``)."""
    return by_server(regen_cache.Histories(regen_cache.folder(root, "history")).read(root / published.HISTORY))


def render_all(repo_root: Path, backfilled: dict[str, VectorHistory] | None = None,
               loaded: Loaded | None = None) -> dict[str, str]:
    """``{repository-relative path: file text}`` of everything published, from the inputs on disk
    (``backfilled``: tool vectors rebuilt from git, used instead of the files on disk; ``loaded``: the
    catalog and records, when the caller read them already)."""
    root = Path(repo_root)
    kept = regen_cache.Outputs(regen_cache.folder(root, "pages"))
    with _no_cyclic_gc():
        outputs, drawing, missing, side = _render_markdown(root, backfilled, loaded or Loaded.read(root), kept)
    if len(missing) >= server_html.PARALLEL_FROM:  # drawn in workers: they share what was read before they fork
        drawing.html_cache.load()
    html_new: dict[str, dict[str, str]] = {}
    # the HTML of the pages kept whole stays in its cache too: other code misses every page, not every conversion
    html_used = {server_html.key(name, outputs[published.server_page(name)])
                 for name in drawing.rows if name not in missing}
    drawn = _draw_all(drawing, list(missing), lambda: outputs.update(side.texts()))
    for name, (page, trend, spark, html, html_key, fresh) in zip(missing, drawn):
        outputs.update({published.server_page(name): page, published.trend(name): trend,
                        published.sparkline(name): spark, **html})
        html_used.add(html_key)
        if fresh:
            html_new[html_key] = html
        if (key := missing[name]) is not None:
            kept.put(key, {label: outputs[path(name)] for label, path in _PAGE_FILES.items()})
    server_html.store(drawing.html_cache, html_new, html_used)
    kept.save()
    return outputs


# A server's files drawn from its page inputs alone (``_draw``), kept together in the regen cache (``Outputs``).
_PAGE_FILES = {"md": published.server_page, "html": published.server_html, "trend": published.trend,
               "spark": published.sparkline}


@dataclass(frozen=True)
class _Drawing:
    """What a server's page, chart and HTML are drawn from."""

    rows: dict[str, Row]
    series: dict[str, Series]
    standing: server_page.Standing
    movements: dict[str, regressions.Movement]
    per_release: dict[str, list]
    html_cache: cache_shards.Pack


def _draw_all(drawing: _Drawing, names: list[str],
              meanwhile: Callable[[], None]) -> list[tuple[str, str, str, dict[str, str], str, bool]]:
    """:func:`_draw` of each name, in worker processes when there are many (``server_html.PARALLEL_FROM``),
    while this process runs ``meanwhile`` (which must fork nothing); in this process after it otherwise."""
    with forkpool.started(_draw, names, server_html.PARALLEL_FROM, shared=drawing) as drawn:
        with _no_cyclic_gc():
            meanwhile()
        return drawn()


def _draw(d: _Drawing, name: str) -> tuple[str, str, str, dict[str, str], str, bool]:
    """Server ``name``'s page, trend chart, sparkline and HTML (with its key in the HTML cache and whether
    it was converted now): the HTML renders the final Markdown, which holds the composition table the chart
    is drawn from."""
    row, series = d.rows[name], d.series[name]
    page = server_page.render(row, series, d.standing, d.movements.get(name))
    if d.per_release.get(name):
        page += "\n" + releases.section(d.per_release[name])
    html, key, fresh = server_html.converted(d.html_cache, name, page, d.standing.composition(row))
    return page, svg.trend_chart(name, series), svg.sparkline(name, series), html, key, fresh


def _render_markdown(root: Path, backfilled: dict[str, VectorHistory] | None, loaded: Loaded, kept: regen_cache.Outputs
                     ) -> tuple[dict[str, str], _Drawing, dict[str, str | None], _Side]:
    """Everything published but the server files not found in ``kept`` (their page, HTML, chart and
    sparkline) and the texts of :class:`_Side`; what those server files are drawn from, their names
    (``{name: key to keep them under, or None}``), and what the other texts are rendered from."""
    catalog, records = loaded.catalog, loaded.records
    names = [e.name for e in catalog.entries]
    history = loaded.history.rows() if loaded.history is not None else _read_history(root)
    disagreeing = published_records.problems(root, records, history)
    if disagreeing:
        raise RecordError(disagreeing)
    rows = readings.attach(build_rows(catalog, records), root)  # beside the headline
    series = {name: comparable(history.get(name, [])) for name in names}
    outputs = {published.CALCULATOR: calculator.render(rows)}
    movements, vectors = _history(root, names, records, series, outputs, backfilled)
    shape = tool_shape.build({n: records[n] for n in names if n in records})
    outputs[published.TOOL_SHAPE] = tool_shape.render(shape)
    standing = server_page.Standing.of(rows, shape)
    per_release = releases.load(root)  # written by `mcp-context-cost releases` from git history
    digests = {row.name: _digest(row) for row in rows}
    # by the object, as a movement holds it too
    trends = {id(s): d for s in series.values() if (d := _digest(s)) is not None}
    missing: dict[str, str | None] = {}
    for row in rows:
        key = _page_key(row, series[row.name], standing, movements.get(row.name), per_release.get(row.name), digests,
                        trends)
        found = kept.get(key) if key is not None else None
        if found is not None and set(found) == set(_PAGE_FILES):
            outputs.update({path(row.name): found[label] for label, path in _PAGE_FILES.items()})
        else:
            missing[row.name] = key
    drawing = _Drawing({row.name: row for row in rows}, series, standing, movements, dict(per_release),
                       server_html.cache(root))
    return outputs, drawing, missing, _Side(root, kept, rows, series, digests, trends, movements, vectors)


@dataclass(frozen=True)
class _Side:
    """What the texts no server file is drawn from are rendered from: the boards, the regressions report and
    the capture index (:meth:`texts`, rendered while the server files are drawn)."""

    root: Path
    kept: regen_cache.Outputs
    rows: list[Row]
    series: dict[str, Series]
    digests: dict[str, bytes | None]
    trends: dict[int, bytes]
    movements: dict[str, regressions.Movement]
    vectors: dict[str, VectorHistory]

    def texts(self) -> dict[str, str]:
        """``{path: text}`` of the boards (:func:`_boards`), the regressions report and the capture index
        (:func:`_capture_index`)."""
        movements = list(self.movements.values())
        # Not re-validated at run time (jsonschema would cost seconds at 1,000 breakdowns); the tests
        # check every shape against schemas/regressions.schema.json.
        report = regressions.to_json(regressions.ordered(movements))
        return {**_boards(self.kept, self.rows, self.series, self.digests, self.trends),
                published.REGRESSIONS_MD: regressions.render_md(movements),
                published.REGRESSIONS_JSON: regressions.render_json(report),
                published.CAPTURE_INDEX: _capture_index(self.root, self.vectors)}


# The leaderboard and the dashboard, drawn from every row and series: kept whole (``Outputs``) by their digests.
_BOARDS = {"md": published.LEADERBOARD_MD, "csv": published.LEADERBOARD_CSV, "dashboard": published.DASHBOARD}


def _boards(kept: regen_cache.Outputs, rows: list[Row], series: dict[str, Series], digests: dict[str, bytes | None],
            trends: dict[int, bytes]) -> dict[str, str]:
    """``{path: text}`` of the leaderboard (Markdown, CSV) and the dashboard, from ``kept`` when found under
    the digests of every row and its series, in order."""
    parts = [part for row in rows for part in (row.name.encode(), digests[row.name], trends.get(id(series[row.name])))]
    key = None if any(part is None for part in parts) else \
        regen_cache.Outputs.key(b"boards", *(part for part in parts if part is not None))
    found = kept.get(key) if key is not None else None
    if found is None or set(found) != set(_BOARDS):
        found = {"md": leaderboard.render_md(rows, series), "csv": leaderboard.render_csv(rows),
                 "dashboard": dashboard.render(rows, series)}
        if key is not None:
            kept.put(key, found)
    return {path: found[label] for label, path in _BOARDS.items()}


def _digest(value: object, known: dict[int, bytes] | None = None) -> bytes | None:
    """The sha256 of ``value``'s whole state (pickled), or ``None`` when it cannot be pickled; ``known``: the
    digests of series by ``id``, each pickled as its digest."""
    try:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=5)
        # (set on the instance: the pickler reads it there only; a subclass's class attribute would hide it)
        pickler.dispatch_table = _DISPATCH if not known else \
            {**_DISPATCH, Series: lambda s: (Series, (known[id(s)],)) if id(s) in known else s.__reduce_ex__(5)}
        pickler.dump(value)
        return hashlib.sha256(out.getbuffer()).digest()
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None


# A history row pickled as its class and fields (all its state, as pickle's generic way takes it) at half the cost
# (a series' digest pickles its rows, 156 a server at three years of weekly sweeps).
_DISPATCH = {**copyreg.dispatch_table, HistoryRow: lambda row: (HistoryRow, (), row.__dict__)}


def _page_key(row, series: Series, standing: server_page.Standing, movement: regressions.Movement | None,
              per_release: list | None, digests: dict[str, bytes | None], trends: dict[int, bytes]) -> str | None:
    """The key of a server's page, HTML, trend chart and sparkline: everything they are drawn from (the row,
    its series, movement and releases, what the standing says of it: ranked count, description percentile,
    its cheaper peers' rows); ``None`` when some input cannot be digested. ``trends``: the series' digests."""
    peers = [digests[r.name] for r in standing.cheaper(row)]
    rest = _digest((row.name, series, movement, per_release, standing.ranked, standing.p90_description), trends)
    parts = [digests[row.name], trends.get(id(series)), rest, *peers]
    return None if any(p is None for p in parts) else regen_cache.Outputs.key(*(p for p in parts if p is not None))


def _history(root: Path, names: list[str], records: dict[str, Record], series: dict[str, Series],
             outputs: dict[str, str], backfilled: dict[str, VectorHistory] | None
             ) -> tuple[dict[str, regressions.Movement], dict[str, VectorHistory]]:
    """Append each entry's current record to its tool vectors (their files' texts into ``outputs``) and
    derive cost movement; returns each entry's movement and tool vectors. Raises ``RecordError``."""
    with _no_cyclic_gc():
        return _history_pass(root, names, records, series, outputs, backfilled)


@contextlib.contextmanager
def _no_cyclic_gc():
    """Cyclic garbage collection paused: rendering allocates many objects and forms no cycles (a
    quarter of the history pass's time and a tenth of a warm regen's otherwise, bench/regen.py)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _history_pass(root: Path, names: list[str], records: dict[str, Record], series: dict[str, Series],
                  outputs: dict[str, str], backfilled: dict[str, VectorHistory] | None
                  ) -> tuple[dict[str, regressions.Movement], dict[str, VectorHistory]]:
    vectors: dict[str, VectorHistory] = {}
    errors: list[str] = []
    checks = regen_cache.Checks(regen_cache.folder(root, "vectors"))
    for name in names:
        try:
            held = backfilled[name] if backfilled is not None else \
                tool_vectors.read(root / published.tool_vectors(name), name, checks)
            vectors[name] = tool_vectors.advance(held, records.get(name), published.record(name), rederived=True)
        except RecordError as exc:
            errors.extend(exc.errors)
    if backfilled is None:  # (a backfill reads no file: saving would drop every kept verdict)
        checks.save()
    if errors:
        raise RecordError(errors)
    movements = {name: regressions.movement(name, series[name], vectors[name]) for name in names}
    outputs.update({published.tool_vectors(name): v.text() for name, v in vectors.items() if v.vectors})
    return movements, vectors


def _capture_index(root: Path, vectors: dict[str, VectorHistory]) -> str:
    """``tool_vectors.capture_index_text(vectors)``, kept in the regen cache by the sha256 of every vector file's text."""
    kept = regen_cache.Outputs(regen_cache.folder(root, "index"), regen_cache.MAX_INDEX)
    texts = {name: v.text() if v.vectors else "" for name, v in vectors.items()}
    key = regen_cache.Outputs.key(*(f"{name}\0{texts[name]}".encode() for name in sorted(texts)))
    found = kept.get(key)
    text = found.get("index") if found is not None else None
    if text is None:
        text = tool_vectors.capture_index_text(vectors)
        kept.put(key, {"index": text})
    kept.save()
    return text


def regen(repo_root: Path, backfilled: dict[str, VectorHistory] | None = None, loaded: Loaded | None = None) -> list[Path]:
    """Rewrite everything published under ``repo_root``; return the output paths, sorted.
    ``backfilled``: tool vectors rebuilt from git (:mod:`harness.pages.backfill`) replacing the
    files on disk; ``loaded``: the catalog and records, when the caller read them already."""
    root = Path(repo_root)
    outputs = render_all(root, backfilled, loaded)
    # in the order of their paths (component by component, as paths compare): write_many sorts them again
    paths = {rel: root / rel for rel in sorted(outputs, key=lambda rel: os.path.normpath(rel).split(os.sep))}
    atomic.write_many({path: _published(rel, outputs[rel]).encode("utf-8") for rel, path in paths.items()})
    _remove_stale(root, {os.path.normpath(rel) for rel in outputs})
    return list(paths.values())


def regen_after_publish(repo_root: Path) -> list[Path]:
    """:func:`regen`, after rewriting ``results/releases.json`` from git and the records on disk (left as it is
    when the history cannot be read, as in a shallow clone); the output paths, sorted."""
    root = Path(repo_root)
    loaded = Loaded.read(root)
    try:
        moved = releases.refresh(root, [e.name for e in loaded.catalog.entries], loaded.records).changed
    except BackfillError:
        moved = None
    written = regen(root, loaded=loaded)
    return sorted(set(written) | ({moved} if moved is not None else set()))


def _verdicts(root: Path) -> regen_cache.Verdicts:
    """The records of ``root`` that passed re-derivation before (kept in the regen cache)."""
    return regen_cache.Verdicts(regen_cache.folder(root, "records"))


def _published(relative, text: str) -> str:
    """The bytes a published file gets: JSON through ``untrusted.json_text``; other formats escape as rendered."""
    return untrusted.json_text(text) if str(relative).endswith(".json") else text


def _remove_stale(root: Path, keep: set[str]) -> list[Path]:
    """Delete generated per-entry files whose entry left the catalog (``keep``: the repository-relative paths
    written, normalized); return what was removed."""
    removed = []
    for folder, suffix in _OWNED:
        try:
            with os.scandir(root / folder) as found:
                entries = sorted(found, key=lambda entry: entry.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            # (a name is all suffix, ".svg", has none: as Path.suffix says)
            if entry.name.endswith(suffix) and len(entry.name) > len(suffix) and \
                    os.path.join(folder, entry.name) not in keep and entry.is_file():
                path = root / folder / entry.name
                path.unlink()
                removed.append(path)
    return removed
