"""``mcp-context-cost measure``: measure one server and write its record and badge.

    mcp-context-cost measure --server memory                  # an entry of servers.yaml
    mcp-context-cost measure --command "npx -y pkg" --name pkg [--env API_KEY ...] [--out DIR]
    mcp-context-cost measure --url https://host/mcp --name remote [--header Authorization]

Where the files go (issue #10, "Commit scope"):

* ``--server NAME`` measures a catalog entry exactly as the sweep does (declared env names get
  dummy values, the same isolation) and publishes through the sweep's own path
  (``harness.cli.publisher``): the publish lock, the journal, the rule that a record is rewritten
  only when what it asserts changed, its ``history.csv`` row and the regenerated pages — into the
  repository holding ``--catalog``. Nothing is committed.
* ``--command``/``--url`` is ad hoc: it writes ``<out>/results/<name>/measurement.json`` and
  ``<out>/badges/<name>.json``, ``<out>`` being ``--out DIR`` or the gitignored
  ``.mcp-context-cost/``, never the database's ``results/`` and ``badges/``. A ``--name`` that is a
  catalog entry with another launch is refused.

Prints a summary. Exit code 0 when the server was measured (measured or dynamic), 3 when a status
without a number was recorded, 2 for bad input (unknown server, bad catalog, a program not on PATH,
a --url that is not http(s), a refused name or folder, the publish lock held by another run), 70
for a bug in the harness (one line naming the server; see ``harness.cli.main``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from harness.core.tokenizer import TokenizerUnavailable
from harness.db import confine
from harness.probe import environment, envnames, isolation, build_record as record, redact, sandbox
from harness.probe.limits import from_env as limits_from_env
from harness.probe.measure import measure_sync
from harness.probe.process import SpawnError, resolve_argv, split_command
from harness.probe.target import Target
from harness.pages.badge import badge_for, write_badge
from harness.util import names, untrusted, urls
from harness.util.cliargs import seconds
from harness.util.untrusted import escape

AD_HOC_DIR = ".mcp-context-cost"  # gitignored; the Action's output folder too
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
                                   "Exit codes: 0 measured or dynamic; 3 another status was recorded (the record "
                                   "says why); 2 bad input, a refused name or folder, or the publish lock held; 70 "
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
    p.add_argument("--catalog", default="servers.yaml",
                   help="catalog file (default: servers.yaml); --server publishes into the repository holding it")
    p.add_argument("--out", help=f"ad-hoc output folder (default: {AD_HOC_DIR}/): <out>/results and <out>/badges; "
                                 "refused when they land, links followed, in the published folders of the repository holding --catalog")
    p.add_argument("--results", help="ad-hoc results folder (default: <out>/results)")
    p.add_argument("--badges", help="ad-hoc badges folder (default: <out>/badges)")
    p.add_argument("--wait", action="store_true", help="--server: wait for a publish holding the lock instead of exiting 2")
    p.add_argument("--single", action="store_true",
                   help="one launch only (no confirmation launch): the record is marked unconfirmed")
    p.add_argument("--isolation", default="auto", choices=("auto", "host", "sandbox", "docker"),
                   help="auto (default) = sandbox where bubblewrap works, else host. "
                        f"{isolation.SANDBOX_HELP}. {isolation.HOST_HELP}. docs/SECURITY.md has the details")
    _add_changed(p)
    p.set_defaults(func=run)


def _add_changed(p) -> None:
    """``--changed`` / ``--index`` (issue #13): join the capture to the published capture index."""
    p.add_argument("--changed", action="store_true",
                   help="after measuring, join the capture by canonicalSha256 to the published capture index: "
                        "behind (with the tokens moving to current would add or save), current, or unidentified")
    p.add_argument("--index", metavar="URL|PATH",
                   help="capture index for --changed, which it implies (default: <results>/capture-index.json "
                        "when it exists, else the published repository's raw URL)")


def report_changed(args, rec: dict) -> None:
    """Print the ``--changed`` line: the join's state, or why there is none (a named problem). The
    local index is the database's (``<catalog's folder>/results/capture-index.json``)."""
    from harness.audit import changed, published
    from harness.util.untrusted import escape

    if not rec.get("canonicalSha256"):
        print(f"changed: no capture to join (status {rec['status']})")
        return
    try:
        index = changed.load_index(args.index, root=None if args.index else _database(args))
    except published.Unavailable as exc:
        print(f"changed: {escape(exc)}")
        return
    print(f"changed: {changed.describe(changed.join(index, rec['server'], rec['canonicalSha256']))}")


def _database(args) -> Path:
    """The repository whose ``results/capture-index.json`` ``--changed`` reads: the one holding the
    ad-hoc ``--results`` folder when one is given, else the one holding ``--catalog``."""
    return Path(args.results).resolve().parent if args.results else Path(args.catalog).resolve().parent


def run(args) -> int:
    if args.server:
        from harness.cli.measure_server import measure_entry

        return measure_entry(args)
    # Only reading the input can be bad input (exit 2). An exception from measuring or recording is
    # a bug in the harness and reaches ``harness.cli.main`` (exit 70): an IndexError is a
    # LookupError, and once was reported here as bad input (issue #11, item 6).
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
    return 0 if rec["status"] in record.MEASURED_STATUSES else 3


def _ad_hoc_dirs(args) -> tuple[Path, Path]:
    """``(results, badges)`` folders of an ad-hoc run. Raises ``ValueError`` when the record's folder
    or the badges folder — links followed — is in the published paths of the database (the
    repository holding ``--catalog``): ``results/``, ``badges/``, ``docs/servers/`` … are written
    only by the catalog path (issue #10, "Commit scope")."""
    out = Path(args.out or AD_HOC_DIR)
    results, badges = Path(args.results or out / "results"), Path(args.badges or out / "badges")
    catalog = Path(args.catalog)
    databases = [catalog.resolve().parent] if catalog.is_file() else []
    for given in (results / args.name, badges):
        owner = confine.published_owner(given, databases)
        if owner is not None:
            raise ValueError(f"{escape(str(given))} is inside the database's published {escape(owner)}: an ad-hoc "
                             f"--command/--url run writes elsewhere (--out DIR, default {AD_HOC_DIR}/); measure a "
                             "catalog entry with --server")
    return results, badges


def _refuse_catalog_name(target: Target, catalog_path: Path) -> None:
    """Raise ``ValueError`` when ``target.name`` is a catalog entry launched differently: its
    record would read as that entry's."""
    from harness.db.catalog import CatalogError, load_catalog

    if not catalog_path.is_file():
        return
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
    """Bounded, validated flags (issue #9, kind 5); raises ``ValueError`` naming the first bad one."""
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
    """A launch command whose program is not on the child's PATH (or not executable) is bad input,
    reported before anything is launched (issue #15). Raises ``ValueError``. In ``docker`` mode the
    program is looked up inside the container, so nothing is checked here."""
    if target.command is None or mode == "docker":
        return
    path = environment.child_env()["PATH"]
    try:
        resolve_argv(split_command(target.command), sandbox.sandbox_path(path) if mode == "sandbox" else path)
    except SpawnError as exc:
        raise ValueError(f"{what}: {exc} (nothing was launched)") from None


def summary(rec: dict, path: Path, badge_path: Path) -> str:
    """A few human lines: status, number, tools, where the files went. Each line passes through
    ``untrusted.line`` (tool names, notes and paths are untrusted text)."""
    lines = [f"{rec['server']}: {rec['status']}"]
    if rec["totalTokens"] is not None:
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
