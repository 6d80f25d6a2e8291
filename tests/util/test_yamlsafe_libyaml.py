"""harness/util/yamlsafe.py's libyaml path against its pure-Python path: a document libyaml composes
constructs to the same data (types included), the same duplicate keys on the same lines and the same nodes
(tag, value, start and end marks); every other document, error and bound crossed is the pure-Python
path's, word for word. Without libyaml everything takes the pure-Python path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness.db import catalog
from harness.util import yamlsafe
from harness.util.yamlsafe import Bounds

ROOT = Path(__file__).resolve().parents[2]
CATALOG = (ROOT / "servers.yaml").read_text(encoding="utf-8")
LAUGHS = "\n".join([f'a: &a [{",".join(["lol"] * 9)}]'] + [
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]) + "\n"
needs_libyaml = pytest.mark.skipif(yamlsafe._LIBYAML is None, reason="PyYAML without libyaml")


def entries(n: int) -> str:
    out = ["servers:"]
    for i in range(n):
        out += [f"  - name: s-{i:04d}", f"    command: npx -y s-{i}@1.0.{i}", "    env: [A_KEY, B_KEY]",
                f"    timeoutSeconds: {i % 7 + 1}{'.5' if i % 2 else ''}",
                f"    needsGit: {'yes' if i % 3 else 'false'}",
                "    setEnv: {MODE: 'on', N: \"1\"}", "    notes: |", f"      line {i}", "      # not a comment"]
    return "\n".join(out) + "\nreference: s-0000\ncycleWeeks: 3\n"


def nested(levels: int, block: bool = False) -> str:
    """A mapping whose ``x`` holds sequences nested until the innermost node is at ``levels`` (root = 1)."""
    if block:
        return "x:\n  " + "- " * (levels - 2) + "leaf\n"
    return "x: " + "[" * (levels - 2) + "leaf" + "]" * (levels - 2) + "\n"


# (text, bounds, whether libyaml composes it)
FAST = [
    pytest.param(CATALOG, catalog.BOUNDS, marks=pytest.mark.slow), (entries(40), catalog.BOUNDS),
    ("servers:\n  - name: a\n    command: npx -y a\n    env: [A, B]\n", yamlsafe.DEFAULT_BOUNDS),
    ("a: &x {k: 1}\nb: *x\nc: [*x, *x]\n", yamlsafe.DEFAULT_BOUNDS),
    ("m: &m {a: 1, b: 2}\no: &o {c: 3}\nn:\n  <<: [*m, *o]\n  b: 9\nq: {<<: *m, a: 0}\n", yamlsafe.DEFAULT_BOUNDS),
    ("when: 2026-11-30\nat: 2026-11-30 10:00:00+02:00\nn: 0x1f\no: 0o17\nbin: 0b101\nu: 1_000\np: +12\n"
     "f: 1.5e3\ng: .inf\nh: -.Inf\nnan: .NaN\nsexagesimal: 1:30\nnull: ~\nempty:\n", yamlsafe.DEFAULT_BOUNDS),
    ("[yes, No, on, OFF, y, n, true, False, Y, '1', !!str 1, !!float 1, !!int '7', !!bool yes, !!null '']\n",
     yamlsafe.DEFAULT_BOUNDS),
    ('q: "a\\tb\\x41\\u263a\\U0001F600\\N\\_\\/"\ns: \'it\'\'s\'\nk: |\n  a\n  b\n\nf: >-\n  c\n   d\nkeep: |+\n  e\n\n'
     "ind: |2\n   three\n", yamlsafe.DEFAULT_BOUNDS),
    ("a: é\nb: [ü, 😀, \u3000x]\nc: {ключ: значение}\n", yamlsafe.DEFAULT_BOUNDS),
    ("b: !!binary aGVsbG8=\ns: !!set {a, b}\no: !!omap [a: 1, b: 2]\np: !!pairs [a: 1]\n", yamlsafe.DEFAULT_BOUNDS),
    ("url: https://example.com/a?b=c#d\nlist:\n- x?y\n- '?'\n", yamlsafe.DEFAULT_BOUNDS),
    ("a: 1\nb: 2\na: 3\nc: {d: 1, d: 2}\n", yamlsafe.DEFAULT_BOUNDS),
    ("servers:\n  - name: a\n    command: x\n    command: y\n  - {name: b, url: u, name: c}\n", catalog.BOUNDS),
    ("n: " + "9" * 32 + "\nf: " + "1" * 30 + ".5\n", yamlsafe.DEFAULT_BOUNDS),
    ("", yamlsafe.DEFAULT_BOUNDS), ("# only a comment\n", yamlsafe.DEFAULT_BOUNDS),
    ("--- a\n...\n", yamlsafe.DEFAULT_BOUNDS), ("%YAML 1.1\n---\na: 1\n", yamlsafe.DEFAULT_BOUNDS),
    (nested(32), catalog.BOUNDS), (nested(32, block=True), catalog.BOUNDS), (nested(64), yamlsafe.DEFAULT_BOUNDS),
]
SLOW = [  # documents libyaml reads otherwise, or that cross a bound or fail: all the pure-Python path's
    "a:\t1\n", "a: 'x\ty'\n", "- a\n-\tb\n", "\ufeffa: 1\n", "a: 1\n\ufeffb: 2\n", "a: 1\r\nb: 2\r\n",
    "a: 1\x85b: 2\n", "a: 1\u2028b: 2\n", "a: 1", "a: !\n", "a: ! 1\n", "- !\n- x\n", "[a?b]\n", "{a: b?c}\n",
    "a: |#c\n  x\n", "a: >-#c\n  x\n", "a: [\n", "a: b: c\n", "a\n---\nb\n", "*x\n", "!foo x\n",
    "!!python/object:os.system x\n", "d: 2026-13-45\n", "? [a]\n: b\n", "%YAML 2.0\n--- a\n", "a: \ud800\n",
    "a: \x07\n", "a: \x7f\n", "a: \x00\n", "a: \ufffe\n", LAUGHS, "&a [*a]\n", "a: &a {b: *a}\n",
    "n: " + "9" * 33 + "\n", "n: 0x" + "f" * 40 + "\n", 'n: !!int "' + "7" * 40 + '"\n',
    nested(33), nested(33, block=True), nested(65), nested(300), nested(2_000, block=True),
    "x: " + "{a: " * 300 + "1" + "}" * 300 + "\n",
]


def outcome(text: str, bounds: Bounds) -> tuple:
    """Everything a caller can see of ``compose`` and ``construct``, in comparable form."""
    try:
        root, loader = yamlsafe.compose(text, bounds)
        try:
            document = yamlsafe.construct(loader, root)
        finally:
            loader.dispose()
    except yamlsafe.YAMLLimitError as exc:
        return ("limit", str(exc), exc.line, exc.path, [_sig(p) for p in exc.parents], nodes(exc.root))
    except Exception as exc:  # noqa: BLE001 - the comparison is of whatever is raised
        return ("error", type(exc).__name__, str(exc))
    dups = [(n.start_mark.line, n.start_mark.column, n.end_mark.line, key) for n, key in loader.duplicates]
    return ("ok", typed(document), dups, nodes(root))


def typed(value: object) -> object:
    """``value`` with every scalar's type spelled out (``1 == 1.0 == True`` hide the differences)."""
    if isinstance(value, dict):
        return [("dict", typed(k), typed(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple, set)):
        items = sorted(value, key=repr) if isinstance(value, set) else value
        return [type(value).__name__] + [typed(v) for v in items]
    return (type(value).__name__, repr(value))


def _sig(node: Node | None) -> tuple | None:
    if node is None:
        return None
    value = node.value if isinstance(node, ScalarNode) else None
    end = node.end_mark  # None on a node still being composed (a parent of one over a bound)
    return (type(node).__name__, node.tag, value, node.start_mark.line, node.start_mark.column,
            end and end.line, end and end.column)


def nodes(root: Node | None) -> list:
    out: list = []
    seen: dict[int, int] = {}
    stack = [root] if root is not None else []
    while stack:  # pre-order; an alias is the position of the node it shares
        node = stack.pop()
        if id(node) in seen:
            out.append(("shared", seen[id(node)]))
            continue
        seen[id(node)] = len(out)
        out.append(_sig(node))
        if isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, MappingNode):
            stack.extend(n for pair in reversed(node.value) for n in reversed(pair))
    return out


def pure_python(text: str, bounds: Bounds, monkeypatch: pytest.MonkeyPatch) -> tuple:
    with monkeypatch.context() as patch:
        patch.setattr(yamlsafe, "_LIBYAML", None)
        return outcome(text, bounds)


@needs_libyaml
@pytest.mark.parametrize("text,bounds", FAST, ids=range(len(FAST)))
def test_libyaml_composes_ordinary_documents_as_the_pure_python_path_does(text, bounds, monkeypatch):
    assert yamlsafe._compose_libyaml(text, bounds) is not None
    assert outcome(text, bounds) == pure_python(text, bounds, monkeypatch)


@needs_libyaml
@pytest.mark.parametrize("text", SLOW, ids=range(len(SLOW)))
def test_everything_else_takes_the_pure_python_path(text, monkeypatch):
    bounds = catalog.BOUNDS
    assert yamlsafe._compose_libyaml(text, bounds) is None
    assert outcome(text, bounds) == pure_python(text, bounds, monkeypatch)


def test_bounds_crossed_are_the_pure_python_paths_errors():
    error = pytest.raises(yamlsafe.YAMLLimitError, yamlsafe.compose, nested(33), catalog.BOUNDS).value
    assert str(error) == "nested deeper than 32 levels" and error.path == ("x",) + (0,) * 31 and error.line == 1
    error = pytest.raises(yamlsafe.YAMLLimitError, yamlsafe.compose, entries(3),
                          Bounds(max_nodes=10)).value
    assert "more than 10 nodes once aliases are expanded" in str(error) and isinstance(error.root, Node)


@needs_libyaml
@pytest.mark.parametrize("text", [nested(33), nested(33, block=True), "x: " + "{a: " * 40 + "1" + "}" * 40 + "\n"])
def test_libyaml_never_composes_a_document_nested_past_the_bound(text, monkeypatch):
    composed = []

    class Spy(yamlsafe._LIBYAML):
        def get_single_node(self):
            composed.append(self)
            return super().get_single_node()

    monkeypatch.setattr(yamlsafe, "_LIBYAML", Spy)
    assert yamlsafe._compose_libyaml(text, catalog.BOUNDS) is None and not composed
    assert yamlsafe._compose_libyaml(nested(32), catalog.BOUNDS) is not None and len(composed) == 1


def test_a_loader_of_the_callers_own_always_composes_in_python():
    calls = []

    class Counting(yamlsafe.BoundedLoader):
        def compose_node(self, parent, index):
            calls.append(index)
            return super().compose_node(parent, index)

    root, loader = yamlsafe.compose("a: [1, 2]\n", loader_class=Counting)
    assert isinstance(loader, Counting) and len(calls) == 5 and yamlsafe.construct(loader, root) == {"a": [1, 2]}


def test_without_libyaml_everything_is_composed_in_python(monkeypatch):
    monkeypatch.setattr(yamlsafe, "_LIBYAML", None)
    root, loader = yamlsafe.compose("a: 1\nb: {c: 2}\na: 3\n")
    assert isinstance(loader, yamlsafe.BoundedLoader)
    assert yamlsafe.construct(loader, root) == {"a": 3, "b": {"c": 2}}
    assert [(node.start_mark.line, key) for node, key in loader.duplicates] == [(2, "a")]
    assert yamlsafe.load(entries(40)) == yaml.safe_load(entries(40))


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure-python"])
def test_catalog_messages_are_the_same_either_way(libyaml, tmp_path, monkeypatch):
    if libyaml and yamlsafe._LIBYAML is None:
        pytest.skip("PyYAML without libyaml")
    if not libyaml:
        monkeypatch.setattr(yamlsafe, "_LIBYAML", None)
    text = ("servers:\n  - name: a\n    command: npx -y a\n  - name: b\n    command: x\n    command: y\n"
            "  - name: Bad\n    url: ftp://x\n    tiemout: 3\nreference: zz\n")
    assert (yamlsafe._compose_libyaml(text, catalog.BOUNDS) is not None) == libyaml
    path = tmp_path / "servers.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(catalog.CatalogError) as info:
        catalog.load_catalog(path)
    assert info.value.errors[0] == (f'{path}:6: entry #2 (name: "b"): field "command": given twice; '
                                    "a mapping key may appear only once")
    assert [e.split(": ", 1)[0] for e in info.value.errors] == [f"{path}:{n}" for n in (6, 7, 8, 9, 10)]
    path.write_text(entries(20), encoding="utf-8")
    assert len(catalog.load_catalog(path).entries) == 20


ATOMS = ["a", "key", "1", "-2", "0x1f", "1.5e3", "yes", "No", "~", "2026-11-30", "1:30", ".inf", "'q s'", '"d\\tq"',
         "é", "x y", "a#b", "a #c", "!!str 1", "!foo x", "!", "&a v", "*a", "&b [x]", "*b", "<<: *b", "|", "|-", ">",
         "|#", "[", "]", "{", "}", ",", ":", "? ", "- ", "---", "...", "%YAML 1.1", "#c", " ", "\t", "\r", "\x85",
         "\ufeff", "'", '"', "a?b", "[a?b]", "a:b", "- -", "a: b", "9" * 40]


@needs_libyaml
@pytest.mark.slow
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(st.sampled_from([0, 1, 2, 4]),
                                st.lists(st.sampled_from(ATOMS), min_size=1, max_size=4),
                                st.sampled_from(["", " ", ": ", ", ", " - "])), min_size=1, max_size=7),
       end=st.sampled_from(["\n", "", "\n\n"]), depth=st.sampled_from([3, 32]))
def test_any_document_either_way(lines, end, depth, monkeypatch):
    text = "\n".join(" " * indent + sep.join(parts) for indent, parts, sep in lines) + end
    bounds = Bounds(max_depth=depth, max_number_chars=32)
    assert outcome(text, bounds) == pure_python(text, bounds, monkeypatch)


_data = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.dates(),
              st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25)


@needs_libyaml
@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_data, flow=st.sampled_from([True, False, None]), width=st.sampled_from([20, 80]), unicode=st.booleans())
def test_any_dumped_document_either_way(data, flow, width, unicode, monkeypatch):
    text = yaml.safe_dump(data, default_flow_style=flow, width=width, allow_unicode=unicode, sort_keys=False)
    bounds = yamlsafe.DEFAULT_BOUNDS
    assert outcome(text, bounds) == pure_python(text, bounds, monkeypatch)
