"""Catalog helpers for this repository's workflows: ``changed --base B --head H`` lists entries new or different
(as parsed YAML; an unreadable base has none); ``reference CATALOG`` names the reference server.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from harness.db.catalog import BOUNDS, CatalogError, load_catalog
from harness.util import untrusted, yamlsafe


def changed_entries(base_text: str | None, head_path: Path) -> list[str]:
    """Names of ``head_path``'s entries absent from or different in ``base_text``. Raises ``CatalogError``."""
    load_catalog(head_path)  # validates: names are unique slugs from here on
    head = _entries(yamlsafe.load(yamlsafe.read_text(head_path, BOUNDS.max_bytes), BOUNDS))
    base = _entries(_lenient(base_text))
    return [name for name, entry in head.items() if base.get(name) != entry]


def _lenient(text: str | None) -> object:
    if not text:
        return None
    try:
        return yamlsafe.load(text, BOUNDS)  # bounded: the base branch's file is input too
    except (yaml.YAMLError, ValueError) as exc:
        print(f"note: the base catalog does not parse ({exc.__class__.__name__}); every entry counts as new",
              file=sys.stderr)
        return None


def _entries(doc: object) -> dict[str, dict]:
    servers = doc.get("servers") if isinstance(doc, dict) else None
    if not isinstance(servers, list):
        return {}
    return {e["name"]: e for e in servers if isinstance(e, dict) and isinstance(e.get("name"), str)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.action.workflow_catalog")
    sub = parser.add_subparsers(dest="what", required=True)
    changed = sub.add_parser("changed", help="entries added or changed relative to a base catalog")
    changed.add_argument("--base", required=True, help="the base branch's catalog (may be missing or empty)")
    changed.add_argument("--head", required=True, help="the catalog under review")
    reference = sub.add_parser("reference", help="the catalog's reference server")
    reference.add_argument("catalog")
    args = parser.parse_args(argv)
    try:
        if args.what == "reference":
            name = load_catalog(Path(args.catalog)).reference
            if not name:
                print(f"error: {args.catalog} declares no reference server", file=sys.stderr)
                return 1
            print(name)
            return 0
        base = Path(args.base)
        base_text = base.read_text(encoding="utf-8") if base.is_file() else None
        if base_text is None:
            print(f"note: no base catalog at {base}; every entry counts as new", file=sys.stderr)
        for name in changed_entries(base_text, Path(args.head)):
            print(name)
        return 0
    except CatalogError as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
