"""``docs/servers/<name>.html``: a server page rendered from its Markdown (:func:`pages`, :func:`render`),
memoised on disk per content (:func:`memo_map`).

Rules: docs/PAGES.md, "Dashboard, calculator, server pages" and "Regen".
"""

from __future__ import annotations

import functools
import hashlib
import html
import importlib.util
import json
import posixpath
import re
from collections.abc import Callable
from pathlib import Path

import markdown_it
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_core.block import block as markdown_it_block
from markdown_it.rules_core.inline import inline as markdown_it_inline
from markdown_it.rules_core.normalize import normalize as markdown_it_normalize
from markdown_it.rules_core.state_core import StateCore
from markdown_it.token import Token

from harness.pages import cache_shards, composition, html_table, page_blocks, regen_cache
from harness.pages.composition import Composition
from harness.pages.text import one_line, with_breaks
from harness.util import forkpool, published

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"
CSS = """
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#fff;margin:0}
main{max-width:980px;margin:0 auto;padding:20px 16px 32px}
h1{font-size:28px;margin:0 0 6px;overflow-wrap:anywhere}h2{font-size:20px;margin-top:30px;border-top:1px solid #e4e7eb;padding-top:14px}h3{font-size:16px}
h1+p{font-size:18px;line-height:1.5;background:#f4f6f8;border-left:4px solid #1f5fa8;padding:10px 14px;margin:8px 0}
a{color:#1f5fa8}
p,li{overflow-wrap:break-word}
.wide{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:8px 0}
th,td{padding:5px 8px;border:1px solid #d8dde3;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f4f6f8}
code{font-size:13px;overflow-wrap:anywhere}
pre{background:#f4f6f8;padding:8px 12px;overflow-x:auto}
blockquote{margin:8px 0;padding:4px 12px;border-left:4px solid #d8dde3;color:#4d5562;overflow-wrap:anywhere}
img{max-width:100%;height:auto}
figure.comp{margin:10px 0 14px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:13px;margin:0 0 8px}
.legend i{display:inline-block;width:11px;height:11px;border:1px solid #1b1f24;border-radius:2px;margin-right:5px;vertical-align:-1px}
ol.bars{list-style:none;padding:0;margin:0}
ol.bars li{display:grid;grid-template-columns:minmax(0,14em) 4.5em minmax(0,1fr);gap:8px;align-items:center;margin:2px 0;font-size:13px}
ol.bars .t{overflow-wrap:anywhere;text-align:right}
ol.bars .v{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:flex;height:14px;background:#f4f6f8;border-radius:2px;overflow:hidden}
.bar span{display:block;height:14px}
ol.bars li.all{font-weight:600;margin-bottom:8px}
@media (max-width:600px){ol.bars li{grid-template-columns:minmax(0,1fr) 4em;}ol.bars .t{text-align:left}ol.bars .bar{grid-column:1/-1}}
""".strip() + "\n" + "\n".join(f".f-{f}{{background:{c}}}" for f, c in (
    ("name", "#cc79a7"), ("description", "#0072b2"), ("inputSchema", "#e69f00"), ("outputSchema", "#009e73"),
    ("annotations", "#56b4e9"), ("other", "#d55e00"), ("punctuation", "#999999")))
CHART_TOOLS = 40  # tools drawn in the chart; the table below lists every tool
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
CELL_TEXT = "cell_text"
FRAGMENT = "html_fragment"  # rendered HTML of an inline token (``_inline_memoised``)


TABLE_OPEN, TABLE_CLOSE = '<div class="wide"><table>\n', "</table></div>\n"


def _markdown(direct_tables: bool = True) -> MarkdownIt:
    """The page parser; ``direct_tables=False``: markdown-it's own table rule (the reference the
    direct rule is tested against)."""
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.add_render_rule("html_inline", lambda self, tokens, idx, options, env: _inline_html(tokens[idx].content))
    md.add_render_rule("html_block", lambda self, tokens, idx, options, env: f"<p>{html.escape(tokens[idx].content)}</p>\n")
    md.add_render_rule("table_open", lambda self, tokens, idx, options, env: TABLE_OPEN)
    md.add_render_rule("table_close", lambda self, tokens, idx, options, env: TABLE_CLOSE)
    md.add_render_rule(CELL_TEXT, lambda self, tokens, idx, options, env: with_breaks(tokens[idx].content))
    if direct_tables:
        lines_table = html_table.install(md, with_breaks, _inline_cell, TABLE_OPEN, TABLE_CLOSE)
        md.core.ruler.at("normalize", _normalize)
        md.core.ruler.at("block", functools.partial(_blocks_direct, lines_table))
        md.core.ruler.at("inline", _inline_memoised)
        md.add_render_rule(FRAGMENT, lambda self, tokens, idx, options, env: tokens[idx].content)
    return md


def _inline_cell(content: str, folder: str) -> str:
    """The HTML of a table cell's content on a page in ``folder``, by markdown-it's inline parser."""
    tokens = _OWN_RULES.parseInline(content, {})
    _mark_text(tokens)
    _point_links(folder, tokens)
    return _OWN_RULES.renderer.render(tokens, _OWN_RULES.options, {})


def _normalize(state: StateCore) -> None:
    """markdown-it's normalize rule, which changes only a carriage return or NUL: skipped on a text without
    them (a page is scanned twice otherwise)."""
    if "\r" in state.src or "\0" in state.src:
        markdown_it_normalize(state)


def _blocks_direct(lines_table: Callable[[list[str], str], str | None], state: StateCore) -> None:
    """markdown-it's block rule, or, for a page all of whose blocks are of the kinds :mod:`page_blocks`
    converts, one fragment holding the page's HTML."""
    body = None if state.inlineMode else page_blocks.body(state.src, str(state.env.get("folder", "")),
                                                          _inline_token, lines_table)
    if body is None:
        markdown_it_block(state)
        return
    fragment = Token(FRAGMENT, "", 0)
    fragment.content = body
    state.tokens.append(fragment)


def _inline_memoised(state: StateCore) -> None:
    """markdown-it's inline rule with each inline token's HTML memoised per content and folder (headings,
    boilerplate and links repeat across pages): its children become one fragment holding that HTML. A page
    that defines link references is parsed in place (its text resolves against them)."""
    if state.inlineMode or "references" in state.env:
        markdown_it_inline(state)
        return
    folder = str(state.env.get("folder", ""))
    for token in state.tokens:
        if token.type == "inline":
            fragment = Token(FRAGMENT, "", 0)
            fragment.content = _inline_token(token.content, folder)
            token.children = [fragment]


@functools.lru_cache(maxsize=65536)
def _inline_token(content: str, folder: str) -> str:
    """The HTML markdown-it renders for an inline token holding ``content`` on a page in ``folder``."""
    if html_table.plain_text(content):  # one text token: its characters, escaped
        return escapeHtml(html_table.unescaped(content))
    tokens = _OWN_RULES.parseInline(content, {"folder": folder})
    _point_links(folder, tokens)
    return _OWN_RULES.renderer.render(tokens, _OWN_RULES.options, {})


def _mark_cell_text(tokens) -> None:
    """Table cell text with break opportunities between a name's parts, never inside a word."""
    in_cell = False
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            in_cell = True
        elif token.type in ("th_close", "td_close"):
            in_cell = False
        elif in_cell:
            _mark_text([token])


def _mark_text(tokens) -> None:
    for token in tokens:
        if token.type == "inline":
            for child in token.children or ():
                if child.type == "text":
                    child.type = CELL_TEXT


def _point_links(folder: str, tokens) -> None:
    """Links to sibling ``.md`` server pages pointed at their HTML (the page is in ``folder``)."""
    for token in tokens:
        for child in token.children or ():
            if child.type == "link_open":
                child.attrSet("href", _html_link(folder, str(child.attrGet("href") or "")))


def _inline_html(content: str) -> str:
    return "<br>" if _BR.fullmatch(content.strip()) else html.escape(content)


_MD = _markdown()
_OWN_RULES = _markdown(direct_tables=False)  # markdown-it's own rules, no memo: what the direct parts must equal


_TITLES = {f: html.escape(composition.LABELS.get(f, f)) for f in (*composition.FIELDS, "punctuation")}


def chart(comp: Composition) -> str:
    """The stacked-bar chart of a composition: the whole server, then the largest tools."""
    totals = comp.field_totals()
    fields = [f for f, total in totals.items() if total]
    def segments(parts: list[tuple[str, int]], scale: int) -> str:
        return "".join(f'<span class="f-{f}" data-field="{f}" data-tokens="{n}" style="width:{100 * n / scale:.3f}%" '
                       f'title="{_TITLES[f]}: {n:,}"></span>' for f, n in parts if n)
    whole = [(f, totals[f]) for f in fields] + [("punctuation", comp.punctuation)]
    legend = "".join(f'<span><i class="f-{f}"></i>{html.escape(composition.LABELS.get(f, f))}</span>'
                     for f in [*fields, *(["punctuation"] if comp.punctuation else [])])
    tools = sorted(comp.tools, key=lambda t: -t.tokens)
    widest = max((t.tokens for t in tools), default=0) or 1
    items = [f'<li class="all"><span class="t">whole server</span><span class="v">{comp.total:,}</span>'
             f'<span class="bar" data-total="{comp.total}">{segments(whole, comp.total or 1)}</span></li>']
    for t in tools[:CHART_TOOLS]:
        items.append(f'<li><span class="t">{with_breaks(t.name)}</span><span class="v">{t.tokens:,}</span>'
                     f'<span class="bar" data-total="{t.tokens}">'
                     f'{segments([(f, t.part(f)) for f in fields], widest)}</span></li>')
    more = (f'<p>The {len(tools) - CHART_TOOLS} smaller tools are in the table.</p>' if len(tools) > CHART_TOOLS else "")
    return (f'<figure class="comp" aria-label="Tokens per tool and field"><div class="legend">{legend}</div>'
            f'<ol class="bars">{"".join(items)}</ol>{more}</figure>\n')


_CHART_AT = re.compile(r'(<h2>Where the tokens go</h2>\n<p>.*?</p>\n)', re.DOTALL)


def render(name: str, markdown: str, comp: Composition | None = None) -> str:
    """The HTML page of server ``name`` from its Markdown page text (``comp``: its composition,
    drawn as a chart in "Where the tokens go")."""
    folder = posixpath.dirname(published.server_page(name))
    md, env = _MD, {"folder": folder}
    tokens = md.parse(markdown, env)
    if "references" in env:  # link references resolve anywhere on the page, tables included: no shortcut
        md = _OWN_RULES
        tokens = md.parse(markdown, {"folder": folder})
    _mark_cell_text(tokens)
    _point_links(folder, tokens)
    body = md.renderer.render(tokens, md.options, {})
    if comp is not None:
        body = _CHART_AT.sub(lambda m: m.group(1) + chart(comp), body, count=1)
    title = f"{one_line(name, 120)}: context cost (mcp-context-cost)"
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(CSP)}">',
        f"<title>{html.escape(title)}</title>",
        f"<style>\n{CSS}\n</style>",
        "</head>",
        "<body>",
        "<main>",
        body.rstrip("\n"),
        "</main>",
        "</body>",
        "</html>",
    ]) + "\n"


def pages(outputs: dict[str, str], compositions: dict[str, Composition | None] | None = None) -> dict[str, str]:
    """``{docs/servers/<name>.html: page}`` for every server page among ``outputs``
    (``{repository path: text}``; ``compositions``: each server's, for its chart)."""
    prefix = published.SERVER_DIR + "/"
    comps = compositions or {}
    return {published.server_html(path[len(prefix):-len(".md")]):
            render(path[len(prefix):-len(".md")], text, comps.get(path[len(prefix):-len(".md")]))
            for path, text in sorted(outputs.items())
            if path.startswith(prefix) and path.endswith(".md") and "/" not in path[len(prefix):]}


def _html_link(folder: str, href: str) -> str:
    """``href`` from the Markdown page in ``folder``, pointing at the HTML page when it names a server page."""
    if "://" in href or href.startswith(("/", "#", "mailto:")) or not href.endswith(".md"):
        return href
    target = posixpath.normpath(posixpath.join(folder, href))
    if posixpath.dirname(target) == published.SERVER_DIR:
        return href[: -len(".md")] + ".html"
    return href


# Converting fewer pages than this in one process is quicker than starting workers.
PARALLEL_FROM = 64
_RENDERER_MODULES = ("harness.pages.server_html", "harness.pages.composition", "harness.pages.html_table",
                     "harness.pages.page_blocks", "harness.pages.text", "harness.util.published", "harness.util.untrusted")


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """sha256 of the HTML converter's source files and the markdown-it version."""
    digest = hashlib.sha256(markdown_it.__version__.encode())
    for name in _RENDERER_MODULES:
        spec = importlib.util.find_spec(name)
        if spec and spec.origin:
            digest.update(Path(spec.origin).read_bytes())
    return digest.hexdigest()


def folder(root: Path) -> Path:
    """The cache of the repository at ``root``: ``$MCP_CONTEXT_COST_CACHE`` (default
    ``~/.cache/mcp-context-cost``) ``/regen/<sha256 of root's absolute path, 16 hex>/html``."""
    return regen_cache.folder(root, "html")


def cache(root: Path) -> cache_shards.Pack:
    """The converted pages kept for the repository at ``root`` (:func:`folder`)."""
    return cache_shards.Pack(folder(root))


def key(name: str, markdown: str) -> str:
    """The cache key of server ``name``'s page converted from ``markdown``."""
    return _key(published.server_page(name), markdown)


def _key(path: str, text: str) -> str:
    return hashlib.sha256(f"{fingerprint()}\0{path}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def memo_map(root: Path, inputs: dict[str, str], convert: Callable[[dict[str, str]], dict[str, str]]) -> dict[str, str]:
    """The union of ``convert({path: text})`` over ``inputs``, each read from the cache under ``root`` or
    converted and stored. ``convert`` must be pure and module-level."""
    kept = cache(root)
    keys = {path: _key(path, text) for path, text in inputs.items()}
    found: dict[str, dict[str, str]] = {}
    for path, key in keys.items():
        entry = _lookup(kept, key)
        if entry is not None:
            found[path] = entry
    missing = sorted(p for p in inputs if p not in found)
    fresh = _convert_all(convert, [{p: inputs[p]} for p in missing])
    found.update(zip(missing, fresh))
    store(kept, {keys[p]: found[p] for p in missing}, set(keys.values()))
    return {out: text for path in sorted(found) for out, text in sorted(found[path].items())}


def converted(kept: cache_shards.Pack, name: str, markdown: str, comp: Composition | None) -> tuple[dict[str, str], str, bool]:
    """``({docs/servers/<name>.html: page}, its key, whether it was converted now)``: server ``name``'s page
    from the cache ``kept`` (:func:`cache`) or converted (:func:`pages`); keep new ones with :func:`store`."""
    path = published.server_page(name)
    key = _key(path, markdown)
    entry = _lookup(kept, key)
    if entry is not None:
        return entry, key, False
    return pages({path: markdown}, {name: comp}), key, True


_MAX_ENTRY = 16 * 2**20


def _lookup(kept: cache_shards.Pack, key: str) -> dict[str, str] | None:
    data = kept.get(key, _MAX_ENTRY)
    try:
        entry = json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        return None
    # an entry damaged into other JSON is a miss, never published
    if isinstance(entry, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in entry.items()):
        return entry
    return None


def _convert_all(convert: Callable[[dict[str, str]], dict[str, str]], items: list[dict[str, str]]) -> list[dict[str, str]]:
    return forkpool.map_forked(convert, items, PARALLEL_FROM)


def store(kept: cache_shards.Pack, new: dict[str, dict[str, str]], used: set[str]) -> None:
    """Keep the new entries and drop every entry the run did not use (best effort)."""
    for key in used:
        kept.ask(key)
    for key, result in new.items():
        kept.put(key, json.dumps(result, ensure_ascii=True).encode("ascii"))
    kept.save()
