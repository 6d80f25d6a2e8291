"""``mcp-context-cost measure``: measure one server. ``--server NAME`` publishes a catalog entry as a
sweep does; ``--command``/``--url`` write to ``--out`` (default ``.mcp-context-cost/``), never the
database. Exit 0 a number, 3 a status without one, 2 bad input, 70 a harness bug.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import functools
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.core.record import ISOLATION_MODES, NUMBERED, Record
from harness.core.tokenizer import TokenizerUnavailable
from harness.db import confine
from harness.db.lock import LockHeld
from harness.probe import build_record as record
from harness.probe import server_env, envnames, isolation, redact, sandbox
from harness.probe.limits import from_env as limits_from_env
from harness.probe.measure import measure, measure_sync
from harness.probe.process import SpawnError, resolve_argv, split_command
from harness.probe.target import Target
from harness.pages.badge import badge_for, write_badge
from harness.util import names, published, untrusted, urls
from harness.util.cliargs import did_you_mean, seconds
from harness.util.schemas import SchemaViolation
from harness.util.untrusted import escape

if TYPE_CHECKING:  # imported by --server alone (measure_entry), and the catalog when it is read
    from harness.db import publish
    from harness.db.catalog import Entry

HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}")
# A command may span lines (shlex treats a line break as a space); nothing else may hold a control.
CONTROL = {"--command": re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]"),
           "--url": re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")}
# The catalog's url pattern (schemas/servers.schema.json), with plain http allowed for a local server.
URL_PATTERN = re.compile(r"^https?://[^\s/?#]+\S*$")


def register(sub) -> None:
    p = sub.add_parser("measure", help="measure one MCP server and write its record and badge (never commits)",
                       description="Measure one MCP server (launch it, initialize, tools/list). --server NAME "
                                   "measures a catalog entry as the sweep does and publishes it the sweep's way "
                                   "(record, badge, history row, pages; it never commits). --command/--url writes "
                                   "<out>/results/<name>/measurement.json and <out>/badges/<name>.json, <out> "
                                   "being --out or .mcp-context-cost/ — never the database's results/ and badges/. "
                                   "Caches (each server's package cache and working folder, the tokenizer's ranks) "
                                   "go to $MCP_CONTEXT_COST_CACHE, default ~/.cache/mcp-context-cost; deleting it "
                                   "costs only time. "
                                   "Exit codes: 0 measured or dynamic; 3 another status was recorded (the record "
                                   "says why); 2 bad input, a refused name or folder, an unusable cache folder, or "
                                   "the publish lock held; 70 "
                                   "a bug in the harness (one line names the server).")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--server", help="name of an entry in the catalog")
    what.add_argument("--command", help="launch command (split like a shell, run without one)")
    what.add_argument("--url", help="Streamable HTTP endpoint of a remote server")
    p.add_argument("--name", help="slug for <out>/results/<name>/ (required with --command/--url; must not be a "
                                  "catalog entry with another launch)")
    p.add_argument("--env", action="append", default=[], metavar="NAME", help="env var name to pass (repeatable)")
    p.add_argument("--header", action="append", default=[], metavar="NAME",
                   help="header name for --url; its value is read from env MCP_HEADER_<NAME>")
    p.add_argument("--timeout", type=seconds, help="first attempt's budget in seconds, 1-600 (default 60)")
    p.add_argument("--needs-git", action="store_true", help="launch inside a throwaway git repository")
    p.add_argument("--catalog", default=published.CATALOG,
                   help="catalog file (default: servers.yaml); --server publishes into the repository holding it")
    p.add_argument("--out", help=f"ad-hoc output folder (default: {published.AD_HOC_DIR}/): <out>/results and <out>/badges; "
                                 "refused when they land, links followed, in the published folders of the repository holding --catalog")
    p.add_argument("--results", help="ad-hoc results folder (default: <out>/results)")
    p.add_argument("--badges", help="ad-hoc badges folder (default: <out>/badges)")
    p.add_argument("--wait", action="store_true", help="--server: wait for a publish holding the lock instead of exiting 2")
    p.add_argument("--single", action="store_true",
                   help="one launch only (no confirmation launch): the record is marked unconfirmed")
    p.add_argument("--isolation", default="auto", choices=("auto", *ISOLATION_MODES),
                   help="auto (default) = sandbox where bubblewrap works, else host. "
                        f"{isolation.SANDBOX_HELP}. {isolation.HOST_HELP}. docs/SECURITY.md has the details")
    _add_changed(p)
    p.set_defaults(func=run)


def _add_changed(p) -> None:
    """``--changed`` / ``--index``: join the capture to the published capture index."""
    p.add_argument("--changed", action="store_true",
                   help="after measuring, join the capture by canonicalSha256 to the published capture index: "
                        "behind (with the tokens moving to current would add or save), current, or unidentified")
    p.add_argument("--index", metavar="URL|PATH",
                   help="capture index for --changed, which it implies (default: <results>/capture-index.json "
                        "when it exists, else the published repository's raw URL)")


def report_changed(args: argparse.Namespace, rec: Record) -> None:
    """Print the ``--changed`` line: the join's state, or the named problem."""
    from harness.audit import changed  # only with --changed: audit's modules stay unloaded otherwise
    from harness.audit.published_reader import Unavailable

    sha = rec.get("canonicalSha256")
    if not sha:
        print(f"changed: no capture to join (status {rec['status']})")
        return
    try:
        index = changed.load_index(args.index, root=None if args.index else _database(args))
    except Unavailable as exc:
        print(f"changed: {escape(exc)}")
        return
    print(f"changed: {changed.describe(changed.join(index, rec['server'], sha))}")


def _database(args) -> Path:
    """The repository whose capture index ``--changed`` reads (``--results``'s, else ``--catalog``'s)."""
    return Path(args.results).resolve().parent if args.results else Path(args.catalog).resolve().parent


def run(args) -> int:
    if args.server:
        return measure_entry(args)
    # Only reading the input can be bad input (exit 2). An exception from measuring or recording is
    # a bug in the harness and reaches ``harness.cli.main`` (exit 70): an IndexError is a
    # LookupError too, so the try below holds only the reading.
    try:
        target = _target(args)
        results, badges = _ad_hoc_dirs(args)
        mode = isolation.resolve_mode(args.isolation)
        limits = limits_from_env()
        require_program(target, mode, "--command" if args.command is not None else "--url")
    except (LookupError, ValueError) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    # The target's secrets stay current for everything done with what the server said, so an
    # exception out of any of it carries them to the internal-error line (redact.carried).
    with redact.activated(redact.Secrets.for_target(target)):
        measurement = measure_sync(target, dual=not args.single, isolation=mode, limits=limits)
        try:
            rec = record.build(measurement, isolation.describe(mode))
        except TokenizerUnavailable as exc:
            print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
            return 2
        path = record.write(rec, results)
        badge_path = write_badge(badges / f"{target.name}.json", badge_for(rec["status"], rec["totalTokens"]))
        print(summary(rec, path, badge_path))
    if getattr(args, "changed", False) or getattr(args, "index", None):
        report_changed(args, rec)
    return 0 if rec["status"] in NUMBERED else 3


def _ad_hoc_dirs(args) -> tuple[Path, Path]:
    """``(results, badges)`` of an ad-hoc run; ValueError when either (links followed) is a
    published path of the database.
    """
    out = Path(args.out or published.AD_HOC_DIR)
    results, badges = Path(args.results or out / published.RESULTS), Path(args.badges or out / published.BADGES)
    catalog = Path(args.catalog)
    databases = [catalog.resolve().parent] if catalog.is_file() else []
    for given in (results / args.name, badges):
        owner = confine.published_owner(given, databases)
        if owner is not None:
            raise ValueError(f"{escape(str(given))} is inside the database's published {escape(owner)}: an ad-hoc "
                             f"--command/--url run writes elsewhere (--out DIR, default {published.AD_HOC_DIR}/); measure a "
                             "catalog entry with --server")
    return results, badges


def _refuse_catalog_name(target: Target, catalog_path: Path) -> None:
    """ValueError when ``target.name`` is a catalog entry launched differently."""
    if not catalog_path.is_file():
        return
    if not _may_name(catalog_path, target.name, published.CATALOG_MAX_BYTES):
        return
    from harness.db.catalog import CatalogError, load_catalog  # YAML and the catalog's schema: when it is read

    try:
        entry = load_catalog(catalog_path).get(target.name)
    except CatalogError:
        print(untrusted.line(f"note: {catalog_path} is not a valid catalog; --name was not checked against it"),
              file=sys.stderr)
        return
    if entry is not None and (entry.command, entry.url) != (target.command, target.url):
        raise ValueError(f"--name {target.name!r} is the catalog entry launched as "
                         f"{entry.command or urls.shown(entry.url or '')!r}; "
                         f"choose another name, or measure the entry itself with --server {target.name}")


# The YAML escapes that can yield a slug's character: a code point (``\x``, ``\u``, ``\U``) and an escaped line
# break, which joins two lines with nothing between. Every other escape yields a character no slug holds, and a
# backslash outside a double-quoted scalar stays a backslash.
_SLUG_ESCAPE = re.compile(rb"\\(?:[xuU]|[\r\n]|\xc2\x85|\xe2\x80[\xa8\xa9])")


def _may_name(catalog_path: Path, name: str, max_bytes: int) -> bool:
    """Whether the catalog file could hold an entry ``name``: it spells the name, or has a YAML escape
    that could, or is too large to tell. A catalog that cannot is not parsed (a slug is never folded)."""
    try:
        with catalog_path.open("rb") as file:
            text = file.read(max_bytes + 1)
    except OSError:
        return True
    return len(text) > max_bytes or name.encode("utf-8") in text or _SLUG_ESCAPE.search(text) is not None


def _target(args) -> Target:
    if not args.name:
        raise ValueError("--name is required with --command/--url")
    _check_flags(args)
    if args.command is not None:
        try:
            split_command(args.command)
        except SpawnError as exc:
            raise ValueError(f"--command: {escape(exc)}") from None
    if args.url is not None and not URL_PATTERN.match(args.url):
        raise ValueError(f"--url '{escape(urls.shown(args.url))}' is not an endpoint: expected http:// or https:// "
                         "and a host, e.g. https://example.com/mcp")
    # The person running --command wrote it: the files it names are shown to the sandbox, each
    # alone, and a folder it names with its secret paths masked (a catalog entry's command never is).
    folders, files = sandbox.named_paths(split_command(args.command), Path.cwd()) if args.command is not None else ((), ())
    target = Target(name=args.name, command=args.command, url=args.url, env=tuple(args.env),
                    headers=tuple(args.header), timeout_seconds=args.timeout or 60.0, needs_git=args.needs_git,
                    host_dirs=folders, host_files=files)
    _refuse_catalog_name(target, Path(args.catalog))
    return target


def _check_flags(args) -> None:
    """ValueError naming the first flag out of bounds."""
    if not names.is_result_name(args.name):
        raise ValueError(f"--name {escape(repr(args.name[:80]))} is not a valid slug: expected {names.RESULT_RULE}")
    for flag, text in (("--command", args.command), ("--url", args.url)):
        if text is not None and (len(text) > 8192 or CONTROL[flag].search(text)):
            raise ValueError(f"{flag} is longer than 8192 characters or holds a control character or invalid Unicode")
    for name in args.env:
        if (why := envnames.problem(name)) is not None:
            raise ValueError(f"--env {escape(repr(name[:80]))} {why}")
    for name in args.header:
        if not HEADER_NAME.fullmatch(name):
            raise ValueError(f"--header {escape(repr(name[:80]))} is not an HTTP header name (at most 128 characters)")


def require_program(target: Target, mode: str, what: str) -> None:
    """ValueError when the program is not on the child's PATH (not checked in docker mode)."""
    if target.command is None or mode == "docker":
        return
    path = server_env.child_env()["PATH"]
    try:
        resolve_argv(split_command(target.command), sandbox.sandbox_path(path) if mode == "sandbox" else path)
    except SpawnError as exc:
        raise ValueError(f"{what}: {exc} (nothing was launched)") from None


def summary(rec: Record, path: Path, badge_path: Path) -> str:
    """A few escaped lines: status, number, tools, where the files went."""
    lines = [f"{rec['server']}: {rec['status']}"]
    if rec["totalTokens"] is not None:
        assert rec["canonicalSha256"] is not None, "a record with a total has its capture's sha256"
        lines[0] += f" — {rec['totalTokens']:,} tokens, {rec['toolCount']} tool{'s' if rec['toolCount'] != 1 else ''}, sha256 {rec['canonicalSha256'][:12]}"
        largest = sorted(rec["tools"], key=lambda t: (-t["tokens"], t["name"]))[:5]
        lines.append(f"  largest {len(largest)} of {rec['toolCount']} tools (tokens of each tool's own JSON):")
        for tool in largest:
            lines.append(f"  {tool['tokens']:>7,}  {tool['name']}")
    for note in rec["notes"]:
        lines.append(f"  note: {note}")
    lines.append(f"  record: {path}")
    lines.append(f"  badge:  {badge_path}")
    return "\n".join(untrusted.line(line) for line in lines)


# The options that describe an ad-hoc launch; a catalog entry declares its own.
AD_HOC_OPTIONS = ("name", "env", "header", "needs_git", "out", "results", "badges")


def measure_entry(args) -> int:
    """Run ``measure --server``: the entry measured by the sweep's code and published through
    ``db.publish`` (never committed; the harness-fault guard needs more servers); the exit code.
    """
    # Only --server needs the sweep and the publish transaction: a plain measure does not pay for them.
    from harness.cli.sweep_cmd import PAGES
    from harness.db import publish
    from harness.db.catalog import CatalogError

    catalog_path = Path(args.catalog).resolve()
    root = catalog_path.parent
    try:  # bad input is found before the lock is taken or anything is written
        entry = _entry(catalog_path, args)
        _refuse_ad_hoc_options(args, root)
    except (CatalogError, LookupError, ValueError) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return 2
    try:
        with publish.session(root, PAGES, commit=False, wait=args.wait, say=_say) as run_:
            rec, kept = _measure_and_publish(root, entry, args, run_)
    except (LockHeld, publish.Refused, TokenizerUnavailable) as exc:
        print(untrusted.lines(f"error: {exc}"), file=sys.stderr)
        return getattr(exc, "code", 2)
    except SchemaViolation as exc:
        print("error: the record failed validation; nothing published:\n" + untrusted.lines(exc), file=sys.stderr)
        return 1
    if kept:
        print(f"note: the published record already says this (captured {rec['measuredAt']}); it is kept as it is, "
              "and today's confirmation is its history.csv row", file=sys.stderr)
    print(summary(rec, root / published.record(entry.name), root / published.badge(entry.name)))
    if getattr(args, "changed", False) or getattr(args, "index", None):
        report_changed(args, rec)
    return 0 if rec["status"] in NUMBERED else 3


def _refuse_ad_hoc_options(args, root: Path) -> None:
    """ValueError for ad-hoc options (``--results``/``--badges`` naming the database's own are fine)."""
    given = [o for o in AD_HOC_OPTIONS if getattr(args, o, None) not in (None, False, [])]
    given = [o for o in given if not (o in (published.RESULTS, published.BADGES) and Path(getattr(args, o)).resolve() == root / o)]
    if given:
        flags = ", ".join(f"--{o.replace('_', '-')}" for o in given)
        raise ValueError(f"{flags} {'applies' if len(given) == 1 else 'apply'} to --command/--url only; --server "
                         "measures the entry as the catalog declares it and publishes into the repository holding "
                         "--catalog")


def _entry(catalog_path: Path, args: argparse.Namespace) -> Entry:
    """The catalog entry with ``--timeout`` applied and its program checked; CatalogError,
    LookupError, ValueError.
    """
    from harness.db.catalog import load_catalog
    from harness.db.targets import target_for

    catalog = load_catalog(catalog_path)
    entry = catalog.get(args.server)
    if entry is None:
        hint = did_you_mean(args.server, (e.name for e in catalog.entries))
        raise LookupError(f"no entry named {args.server!r} in {args.catalog}{hint}")
    entry = dataclasses.replace(entry, timeout_seconds=args.timeout) if args.timeout else entry
    require_program(target_for(entry), isolation.resolve_mode(args.isolation), f"entry {args.server!r}")
    return entry


def _measure_and_publish(root: Path, entry: Entry, args: argparse.Namespace,
                         run_: publish.Session) -> tuple[Record, bool]:
    from harness.db import publish  # as in measure_entry
    from harness.db.journal import Staging
    from harness.db.progress import Progress
    from harness.db.sweep import sweep

    date = dt.datetime.now(dt.timezone.utc).date()
    mode = isolation.resolve_mode(args.isolation)
    measurer = functools.partial(measure, isolation=mode, pass_declared_values=False, dual=not args.single)
    stage = Staging(root, f"measure-{date.isoformat()}-{os.getpid()}")
    try:
        result = asyncio.run(sweep([entry], root, stage, date, concurrency=1, progress=Progress(), isolation_mode=mode,
                                   measurer=measurer, newest=publish.newest_dates(root)))
        outcome = run_.publish(stage, result.records, result.history_records(), result.staged, date, None)
    finally:
        if not stage.has_journal():
            stage.discard()
    for problem in outcome.problems:
        print(untrusted.line(f"problem: {problem}"), file=sys.stderr)
    return result.records[entry.name], entry.name in result.unchanged


def _say(line: str) -> None:
    print(line, file=sys.stderr)
