"""The server catalog: ``load_catalog`` reads ``servers.yaml`` into a ``Catalog`` of ``Entry``, or raises
``CatalogError`` listing every problem with file, line, entry and field (docs/CATALOG.md).
"""
from __future__ import annotations

import difflib
import json
import math
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

import jsonschema
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness.db.catalog_checks import check_env_names, check_strings, show
from harness.util import names, published, schemas, untrusted, yamlsafe

SCHEMA_PATH = schemas.schema_file("servers")  # package data: found from any working directory
DEFAULT_CYCLE_WEEKS = 3
BOUNDS = yamlsafe.Bounds(max_bytes=published.CATALOG_MAX_BYTES, max_depth=32, max_nodes=200_000, max_number_chars=32)

# What each field must be, in words, for error messages (keys are the YAML spellings).
_EXPECTED = {
    "name": 'a slug of lowercase letters, digits and "-" (^[a-z0-9][a-z0-9-]*$, at most 64 characters)',
    "command": "a non-empty command line (split with shlex, never run by a shell)",
    "url": "an https:// URL",
    "package": "a non-empty string",
    "env": "a list of distinct environment variable names (^[A-Z_][A-Z0-9_]*$)",
    "setEnv": "a mapping of environment variable names (^[A-Z_][A-Z0-9_]*$) to strings",
    "headers": "a list of distinct HTTP header names",
    "category": "a string",
    "repo": "an http(s) URL",
    "timeoutSeconds": "a number between 1 and 600",
    "needsGit": "true or false",
    "notApplicable": 'a mapping with exactly the string fields "reason" and "evidence"',
    "notes": "a string",
    "launchNote": "a non-empty string: why the command differs from the documented one",
    "triage": 'a mapping with "outcome" (lists-tools, needs-credential, needs-setting, needs-runtime or broken), "date" '
              '(YYYY-MM-DD) and an optional "evidence" string',
    "reference": "the name of an entry in servers",
    "cycleWeeks": "a whole number of weeks between 1 and 52",
    "servers": "a list of server entries",
}
_SIZE_KINDS = {"maxLength": "characters", "maxItems": "items", "maxProperties": "names"}


class CatalogError(ValueError):
    """A catalog that cannot be used; ``errors`` holds one line per problem."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


# What a person who installed the command and ran it elsewhere needs to read.
NOT_FOUND = ("no such file. The catalog is servers.yaml at the root of a clone of the mcp-context-cost "
             "repository: run there, or point --catalog / --root at it; measure --command or --url needs no catalog.")

@dataclass(frozen=True)
class NotApplicable:
    reason: str
    evidence: str  # substring the failure text must contain for status not-applicable


@dataclass(frozen=True)
class Entry:
    """One catalog entry: exactly one of ``command``/``url``; ``env`` and ``headers`` are names only."""

    name: str
    command: str | None = None
    url: str | None = None
    package: str | None = None
    env: tuple[str, ...] = ()
    set_env: tuple[tuple[str, str], ...] = ()
    headers: tuple[str, ...] = ()
    category: str | None = None
    repo: str | None = None
    timeout_seconds: float | None = None
    needs_git: bool = False
    not_applicable: NotApplicable | None = None
    notes: str | None = None
    launch_note: str | None = None  # why the command differs from the one the package documents

    def argv(self) -> list[str]:
        """``shlex.split(command)``; ValueError for a url entry."""
        if self.command is None:
            raise ValueError(f"entry {self.name!r} is a url entry and has no command")
        return shlex.split(self.command)

    @property
    def launcher(self) -> str:
        """``"url"`` for a remote entry, else the program name (``npx``, ``uvx``, ...)."""
        return "url" if self.command is None else os.path.basename(self.argv()[0])


@dataclass(frozen=True)
class Catalog:
    entries: tuple[Entry, ...]
    reference: str | None = None
    cycle_weeks: int = DEFAULT_CYCLE_WEEKS

    def get(self, name: str) -> Entry | None:
        return next((e for e in self.entries if e.name == name), None)


class _Reporter:
    """Builds ``path:line: entry #i (name: "x"): message`` lines against the parsed tree."""

    def __init__(self, label: str, root: MappingNode | None):
        self.label, self.root = label, root
        self._found: list[tuple[int, str]] = []
        self.flagged: set[tuple] = set()  # paths something was already said about

    @property
    def lines(self) -> list[str]:
        """Every message so far, in file order."""
        return [text for _, text in sorted(self._found, key=lambda pair: pair[0])]

    def _node_at(self, path: list[str | int]) -> Node | None:
        node = self.root
        for step in path:
            if isinstance(node, MappingNode) and isinstance(step, str):
                nxt = next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == str(step)), None)
            elif isinstance(node, SequenceNode) and isinstance(step, int) and step < len(node.value):
                nxt = node.value[step]
            else:
                nxt = None
            if nxt is None:
                break
            node = nxt
        return node

    def add(self, path: list, message: str, line: int | None = None, entry: object = None) -> None:
        """Record ``message`` about the value at ``path`` (``line`` and ``entry`` when the tree lacks
        them).
        """
        self.flagged.add(tuple(path))
        node = self._node_at(path)
        if line is None and node is not None:
            line = node.start_mark.line + 1
        where = f"{self.label}:{line}" if line else self.label
        if len(path) >= 2 and path[0] == "servers" and isinstance(path[1], int):
            name = _entry_name(entry if entry is not None else self._node_at(path[:2]))
            who = f'(name: "{untrusted.escape(name)}")' if name is not None else "(no name)"
            self._found.append((line or 0, f"{where}: entry #{path[1] + 1} {who}: {message}"))
        else:
            self._found.append((line or 0, f"{where}: top level: {message}"))


def _entry_name(node: object) -> str | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if (isinstance(key, ScalarNode) and key.value == "name" and isinstance(value, ScalarNode)
                    and value.tag == "tag:yaml.org,2002:str"):
                return value.value if len(value.value) <= 80 else value.value[:77] + "..."
    return None


def _describe(error: jsonschema.ValidationError, rep: _Reporter) -> None:
    path = list(error.absolute_path)
    in_entry = len(path) >= 2 and path[0] == "servers"
    field_path = path[2:] if in_entry else path
    kind, inst = error.validator, cast(Any, error.instance)  # Unset only for errors not raised by validation
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if in_entry and not field_path and not isinstance(inst, dict) and kind != "type":
        return  # an entry that is not a mapping: its type error says all there is to say
    if kind == "additionalProperties":
        known = list(schema.get("properties", {}))
        for extra in sorted((k for k in inst if k not in known), key=str):
            near = difflib.get_close_matches(str(extra), known, n=1)
            hint = f' (did you mean "{near[0]}"?)' if near else f" (known fields: {', '.join(known)})"
            qualified = ".".join(str(p) for p in field_path + [extra])
            rep.add(path + [extra], f'unknown field "{qualified}"{hint}')
        return
    if kind == "oneOf":  # the command/url choice
        both = "command" in inst and "url" in inst
        msg = 'both "command" and "url" given' if both else 'missing both "command" and "url"'
        rep.add(path, msg + ": give exactly one")
        return
    if kind == "required":
        for missing in cast(list[str], error.validator_value):  # the schema's "required" list
            if missing not in inst:
                field = ".".join(map(str, field_path + [missing]))
                rep.add(path, f'field "{field}": required but missing')
        return
    if kind == "dependentRequired":
        rep.add(path + ["headers"], 'field "headers": only allowed on a url entry')
        return
    if not field_path:  # the whole document or a whole entry has the wrong type
        what = "a mapping" if in_entry or not path else _EXPECTED.get(str(path[-1]), kind)
        rep.add(path, f"expected {what}, got {show(inst)}")
        return
    top = str(field_path[0])
    items = [p for p in field_path[1:] if isinstance(p, int)]
    label = f'field "{".".join(str(p) for p in field_path if isinstance(p, str))}"'
    if items:
        label += f" item #{items[0] + 1}"
    if kind in _SIZE_KINDS:  # a length bound: say which, not the whole value
        size = len(inst) if isinstance(inst, (str, list, dict)) else 0
        unit = _SIZE_KINDS[kind]
        rep.add(path, f"{label}: at most {error.validator_value} {unit} allowed, got {size}")
        return
    if kind == "uniqueItems":
        rep.add(path, f"{label}: expected {_EXPECTED.get(top, kind)}, got duplicates in {show(inst)}")
        return
    rep.add(path, f"{label}: expected {_EXPECTED.get(top, error.message)}, got {show(inst)}")


def _semantic_checks(doc: dict, rep: _Reporter) -> None:
    """What JSON Schema cannot say (unique names, splittable commands, a real reference, full-match
    names, refused env names); skips entries the schema rejected.
    """
    servers = got if isinstance(got := doc.get("servers"), list) else []
    first: dict[str, int] = {}
    for i, item in enumerate(servers):
        if not isinstance(item, dict):
            continue
        check_strings(item, ["servers", i], rep.add, rep.flagged)
        check_env_names(item, ["servers", i], rep.add, rep.flagged)
        name = item.get("name")
        if isinstance(name, str) and not names.is_catalog_name(name) and ("servers", i, "name") not in rep.flagged:
            rep.add(["servers", i, "name"], f'field "name": expected {_EXPECTED["name"]}, got {show(name)}')
        if isinstance(name, str):
            if name in first:
                rep.add(["servers", i, "name"], f'field "name": duplicate of entry #{first[name] + 1}')
            else:
                first[name] = i
        timeout = item.get("timeoutSeconds")
        if isinstance(timeout, float) and not math.isfinite(timeout):
            rep.add(["servers", i, "timeoutSeconds"],
                    f'field "timeoutSeconds": expected {_EXPECTED["timeoutSeconds"]}, got {show(timeout)}')
        command = item.get("command")
        if isinstance(command, str) and command.strip():
            try:
                argv, why = shlex.split(command), "it splits into nothing"
            except ValueError as exc:
                argv, why = None, f"shlex: {exc}"
            if not argv:
                rep.add(["servers", i, "command"],
                        f'field "command": expected {_EXPECTED["command"]}, got {show(command)} ({why})')
    ref = doc.get("reference")
    if isinstance(ref, str) and ref not in first:
        rep.add(["reference"], f'field "reference": expected {_EXPECTED["reference"]}, got {show(ref)}')


def _entry(item: dict) -> Entry:
    na = item.get("notApplicable")
    return Entry(
        name=item["name"], command=item.get("command"), url=item.get("url"),
        package=item.get("package"), env=tuple(item.get("env", ())),
        set_env=tuple(sorted(item.get("setEnv", {}).items())),
        headers=tuple(item.get("headers", ())), category=item.get("category"),
        repo=item.get("repo"), timeout_seconds=item.get("timeoutSeconds"),
        needs_git=bool(item.get("needsGit", False)),
        not_applicable=NotApplicable(na["reason"], na["evidence"]) if na else None,
        notes=item.get("notes"),
        launch_note=item.get("launchNote"),
    )


def load_schema(schema_path: str | os.PathLike | None = None) -> dict:
    source = Path(schema_path) if schema_path else SCHEMA_PATH
    return json.loads(source.read_text(encoding="utf-8"))


class Passed(Protocol):
    """Catalog texts that passed every check before, with their document (a cache: any answer may be ``None``)."""

    def get(self, text: str) -> dict | None: ...

    def put(self, text: str, document: dict) -> None: ...


def load_catalog(path: str | os.PathLike, schema_path: str | os.PathLike | None = None,
                 passed: Passed | None = None) -> Catalog:
    """Read, validate and return the catalog at ``path``; CatalogError for any bad input (bounded by
    ``BOUNDS``), OSError included. ``passed``: the document of a text that passed before (with the default
    schema only), taken instead of parsing and checking it again; a text that passes now is given to it.
    """
    label = untrusted.escape(os.fspath(path))
    try:
        text = yamlsafe.read_text(path, BOUNDS.max_bytes)
    except FileNotFoundError:
        raise CatalogError([f"{label}: {NOT_FOUND}"]) from None
    except (OSError, UnicodeDecodeError, yamlsafe.YAMLLimitError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CatalogError([f"{label}: cannot read: {untrusted.escape(why)}"]) from None
    passed = passed if schema_path is None else None
    known = passed.get(text) if passed is not None else None
    if known is not None:
        return _catalog(known)
    doc = _checked(text, label, schema_path)
    if passed is not None:
        passed.put(text, doc)
    return _catalog(doc)


def _checked(text: str, label: str, schema_path: str | os.PathLike | None) -> dict:
    """The catalog document of ``text``, every check passed; CatalogError naming every problem."""
    root, loader, doc = _parse(text, label)
    rep = _Reporter(label, root if isinstance(root, MappingNode) else None)
    if not isinstance(doc, dict):
        rep.add([], f'expected a mapping with a "servers" list, got {show(doc)}')
        raise CatalogError(rep.lines)
    for key_node, key in loader.duplicates:
        line = key_node.start_mark.line  # 0-based; find the entry whose node spans it, if any
        seq = rep._node_at(["servers"])
        spans = seq.value if isinstance(seq, SequenceNode) else []
        owner = [i for i, n in enumerate(spans) if n.start_mark.line <= line <= n.end_mark.line]
        where = ["servers", owner[-1]] if owner and isinstance(doc.get("servers"), list) else []
        rep.add(where, f'field "{key}": given twice; a mapping key may appear only once', line + 1)

    validator = jsonschema.Draft202012Validator(load_schema(schema_path))
    for error in sorted(validator.iter_errors(doc), key=_order):
        _describe(error, rep)
    _semantic_checks(doc, rep)
    if rep.lines:
        raise CatalogError(rep.lines)
    return doc


def _catalog(doc: dict) -> Catalog:
    return Catalog(
        entries=tuple(_entry(item) for item in doc["servers"]),
        reference=doc.get("reference"),
        cycle_weeks=doc.get("cycleWeeks", DEFAULT_CYCLE_WEEKS),
    )


def _parse(text: str, label: str):
    """``(root node, loader, document)``; CatalogError for a syntax error or a bound crossed."""
    loader = None
    try:
        root, loader = yamlsafe.compose(text, BOUNDS)
        return root, loader, yamlsafe.construct(loader, root)
    except yamlsafe.YAMLLimitError as exc:
        raise CatalogError(_limit_lines(exc, label)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{label}:{mark.line + 1}" if mark else label
        detail = [f"column {mark.column + 1}"] if mark else []
        if exc.problem and exc.context and exc.context_mark:
            detail.append(f"{exc.context} at line {exc.context_mark.line + 1}")
        extra = untrusted.escape(f" ({'; '.join(detail)})" if detail else "")
        raise CatalogError([f"{where}: YAML syntax error: {untrusted.escape(exc.problem or exc.context)}{extra}"]) \
            from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        line = text[: max(exc.position, 0)].count("\n") + 1
        raise CatalogError([f"{label}:{line}: YAML syntax error: character #x{exc.character:04x} "
                            f"is not allowed in YAML"]) from None
    except yaml.YAMLError as exc:
        raise CatalogError([f"{label}: YAML error: {untrusted.escape(exc)}"]) from None
    except (ValueError, OverflowError, RecursionError) as exc:  # a scalar PyYAML cannot construct
        raise CatalogError([f"{label}: YAML error: {untrusted.escape(exc)}"]) from None
    finally:
        if loader is not None:
            loader.dispose()


def _limit_lines(exc: yamlsafe.YAMLLimitError, label: str) -> list[str]:
    path = list(exc.path)
    rep = _Reporter(label, exc.root if isinstance(exc.root, MappingNode) else None)
    entry = exc.parents[2] if len(exc.parents) > 2 else None
    if len(path) >= 3 and path[0] == "servers" and isinstance(path[1], int):
        field = ".".join(str(p) for p in path[2:] if not isinstance(p, int)) or str(path[2])
        rep.add(path, f'field "{untrusted.escape(field)}": {exc}', exc.line, entry=entry)
    else:
        where = f" (under {untrusted.escape('.'.join(str(p) for p in path))})" if path else ""
        rep.add([], f"{exc}{where}", exc.line)
    return rep.lines


def _order(error: jsonschema.ValidationError) -> tuple:
    path = list(error.absolute_path)
    index = path[1] if len(path) >= 2 and isinstance(path[1], int) else -1
    return (index, [str(p) for p in path[2:]], error.validator)
