"""``mcp-context-cost audit``: what the MCP servers in this machine's client configs cost, and gates that fail closed.

Usage, report and exit codes: docs/AUDIT.md.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path

from harness.audit import changed, claude_settings, discovery, identity, measuring, published_reader, render_markdown, render_text
from harness.audit import gates as gates_mod
from harness.audit import posture, sessions, suggest, trust
from harness.audit.clients.config_format import Layout
from harness.audit.gates import load_baseline, parse_increase
from harness.audit.policy import read_policy
from harness.audit.render_text import Running
from harness.audit.report import build as build_report
from harness.audit.report import redact
from harness.audit.trust import managed_dir
from harness.core.bands import CONTEXT_WINDOW
from harness.core.canonical import stringify
from harness.core.record import ISOLATION_MODES
from harness.core.tokenizer import TokenizerUnavailable
from harness.probe import isolation
from harness.probe.isolation import HOST_HELP
from harness.probe.redact import Secrets
from harness.util import atomic, schemas, untrusted
from harness.util.cliargs import positive_int, seconds
from harness.util.published import CAPTURE_INDEX, DIVERGENCE, TOOL_SHAPE
from harness.util.untrusted import escape

DEFAULT_CONTEXT = CONTEXT_WINDOW
REPO = Path(__file__).resolve().parents[2]
STDOUT = "-"


def register(sub) -> None:
    p = sub.add_parser("audit", help="what the MCP servers in your client configs cost, and gates",
                       description="Find every MCP client config on this machine (Claude Code, Claude Desktop, "
                                   "Cursor, VS Code, Windsurf, Gemini CLI, Zed, Kiro, Goose, Codex CLI, Cline, "
                                   "Continue), measure each distinct server once, and report per config file and "
                                   "per session, with Claude Code's deferral posture; with --changed and --suggest, "
                                   "against what is published. Exit codes: 0 ok; 1 a gate failed, a requested "
                                   "--changed/--suggest check could not be made, or nothing could be measured; 2 bad "
                                   "input.")
    p.add_argument("--config", action="append", default=[], metavar="PATH", type=Path,
                   help="also read this file; its client is unknown (repeatable)")
    p.add_argument("--no-discover", action="store_true", help="read only the --config files (e.g. in CI)")
    p.add_argument("--context", type=positive_int, default=DEFAULT_CONTEXT, metavar="N",
                   help=f"context window in tokens for shares and thresholds (default {DEFAULT_CONTEXT:,})")
    p.add_argument("--budget", type=_tokens, metavar="N", help="fail unless every session totals at most N tokens")
    p.add_argument("--baseline", type=Path, metavar="REPORT.json", help="an earlier audit --json report to compare with")
    p.add_argument("--max-increase", type=_increase, metavar="N|N%",
                   help="with --baseline: fail when a config grew by more than N tokens or N percent")
    p.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE", help="the JSON report (to stdout, or FILE)")
    p.add_argument("--markdown", nargs="?", const=STDOUT, metavar="FILE", help="the Markdown report (stdout or FILE)")
    p.add_argument("--timeout", type=seconds, default=60.0, metavar="S", help="first attempt's budget per server (1-600)")
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="servers measured at once (4)")
    p.add_argument("--isolation", default="host", choices=(*ISOLATION_MODES, "auto"),
                   help="host (default: as your client runs it, with your config's env values) " +
                        HOST_HELP.removeprefix("host ") + ". sandbox (bubblewrap) hides your home and files and "
                        "gives declared env names placeholder values. docs/SECURITY.md has the details")
    p.add_argument("--single", action="store_true", help="one launch per server (no confirmation launch)")
    p.add_argument("--trust-project", action="store_true",
                   help="also measure the servers of this project's config files (.mcp.json, .vscode/mcp.json, "
                        ".cursor/mcp.json, .codex/config.toml, ...) that their client has no approval of on record; "
                        "they run in the sandbox where it works. Without it such servers are never launched and are "
                        "in no total (a server you rejected stays rejected)")
    _add_published(p)
    p.set_defaults(func=run)


# (check, what it does, source flag, what it reads, its path), spelled as ``measure`` spells them.
PUBLISHED_CHECKS = (
    ("--changed", "join each measured server by canonicalSha256 to the published capture index: behind (with the "
                  "tokens moving to current would add or save, and both dates), current, or unidentified",
     "--index", "capture index", CAPTURE_INDEX),
    ("--suggest", "place each measured server's tools in the published tool shape; a description at or above p90 "
                  "draws a suggestion, else 'Nothing unusual'",
     "--tool-shape", "tool-shape baseline", TOOL_SHAPE),
)


def _add_published(p) -> None:
    """``--changed``/``--index`` and ``--suggest``/``--tool-shape``: a source flag implies its check."""
    for check, does, source, what, relative in PUBLISHED_CHECKS:
        p.add_argument(check, action="store_true", help=does)
        p.add_argument(source, metavar="URL|PATH",
                       help=f"{what} for {check}, which it implies (default: this checkout's {relative} when it "
                            "exists, else the published repository's raw URL)")


def run(args, measurer=None) -> int:
    """Entry point of the subcommand; returns the exit code."""
    try:
        baseline = _check_input(args)
    except (ValueError, gates_mod.BaselineError) as exc:
        print(f"error: {escape(exc)}", file=sys.stderr)
        return 2
    try:
        report, redactor = _audit(args, measurer)
    except TokenizerUnavailable as exc:
        print(f"error: {escape(exc)}", file=sys.stderr)
        return 2
    results = []
    if args.budget is not None:
        results.append(gates_mod.budget_gate(report, args.budget))
    if baseline is not None:
        results.append(gates_mod.baseline_gate(report, baseline, args.max_increase))
    results += [gates_mod.lookup_gate(name, report[name]) for name in ("changed", "suggest") if report[name]]
    report["gates"] = [g.to_json() for g in results]
    report["exitCode"] = gates_mod.exit_code(report, results)

    report = redact(report, redactor)

    schemas.check("audit-report", report, where="audit report")
    _emit(args, report)
    return report["exitCode"]


def _check_input(args) -> dict | None:
    """Everything that can be wrong with the invocation, before anything is launched."""
    if args.max_increase is not None and args.baseline is None:
        raise ValueError("--max-increase needs --baseline to compare against")
    if args.json == STDOUT and args.markdown == STDOUT:
        raise ValueError("--json and --markdown cannot both go to stdout: name a FILE for one of them")
    missing = [str(p) for p in args.config if not p.exists()]
    if missing:
        raise ValueError(f"--config: no such file: {', '.join(missing)}")
    if args.no_discover and not args.config:
        raise ValueError("--no-discover reads only --config files: give at least one")

    isolation.resolve_mode(args.isolation)  # isolation.Unavailable (a ValueError) before any server starts
    for flag, value in (("--index", args.index), ("--tool-shape", args.tool_shape)):
        if value is not None and not value.strip():
            raise ValueError(f"{flag} needs a URL or a PATH, got an empty value")
    return load_baseline(args.baseline) if args.baseline is not None else None


def _audit(args, measurer):
    layout = dataclasses.replace(Layout.current(), trust_project=args.trust_project)
    files = discovery.discover(layout, args.config, search=not args.no_discover)
    entries = [e for f in files for e in f.entries]
    blocked = [e for e in entries if e.blocked]
    looked = _published(args)
    redactor = measuring.redactor_for(entries) | _source_secrets(looked)
    for name, found in looked.items():
        if found and found.problem:
            _progress(redactor, f"--{name}: {found.problem}")
    groups = identity.group(entries)
    found = sum(1 for f in files if f.state != "absent")
    _progress(redactor, f"found {found} config file(s), {len(entries)} entries, {len(groups)} distinct server(s) to "
                        "measure")
    if blocked:
        _progress(redactor, f"{len(blocked)} project server(s) not launched: their client would not start them without "
                            f"an approval that is not on record ({', '.join(e.name for e in blocked[:5])}"
                            f"{', …' if len(blocked) > 5 else ''}); {trust.TRUST_FLAG} measures them in the sandbox")
    mode = isolation.resolve_mode(args.isolation)
    kwargs = {"measurer": measurer} if measurer else {}

    with Running(len(groups), args.timeout) as screen:  # on a terminal: which servers still run, and the budget
        outcomes = asyncio.run(measuring.measure_all(
            groups, redactor, isolation=mode, timeout=args.timeout, concurrency=args.concurrency, dual=not args.single,
            progress=lambda line: screen.line(escape(redactor.text(line))), started=screen.started, ended=screen.ended,
            sandbox=_sandbox() if any(e.sandboxed for e in entries) else None, **kwargs))
    places = [claude_settings.shell_place()] + claude_settings.settings_places(layout)
    composed = sessions.compose(files)
    band = posture.load_band(REPO / DIVERGENCE)
    built = build_report(files, composed, outcomes, context=args.context, isolation=mode, places=places,
                         policy=read_policy(places[1:]), band=band,
                         managed_path=str(managed_dir(layout) / "managed-mcp.json"), **looked)
    return built, redactor


def _sandbox() -> str | None:
    """The sandbox's mode where it can start here, else ``None``."""
    try:
        return isolation.resolve_mode("sandbox")
    except isolation.Unavailable:
        return None


def _published(args) -> dict:
    """The published files asked for, read before any server is launched (a failure is a named problem)."""
    looked: dict[str, published_reader.Lookup | None] = {"changed": None, "suggest": None}
    for name, source, relative, reader in (("changed", args.index, CAPTURE_INDEX, changed.load_index),
                                           ("suggest", args.tool_shape, TOOL_SHAPE, suggest.load_usable)):
        if getattr(args, name) or source:
            looked[name] = published_reader.lookup(source or published_reader.default_source(relative), reader)
    return looked


def _source_secrets(looked: dict):
    """Credentials in an ``--index``/``--tool-shape`` URL: secrets, in no output."""
    return Secrets(v for found in looked.values() if found for v in Secrets.handed(url=found.source).values)


def _emit(args, report: dict) -> None:
    text = json_text(report)
    markdown = render_markdown.render(report)
    # The report was redacted field by field (``harness.audit.report.redact``) and both human forms
    # are rendered from it alone; a second pass over the whole text would redact the harness's own
    # words and paths (a config's path beside a secret-named file variable).
    for target, body in ((args.json, text), (args.markdown, markdown)):
        if target not in (None, STDOUT):
            atomic.write_text(Path(target), body)
    if args.json == STDOUT:
        sys.stdout.write(text)
    elif args.markdown == STDOUT:
        sys.stdout.write(markdown)
    else:
        sys.stdout.write(render_text.render(report, color=sys.stdout.isatty()))
    sys.stdout.flush()


def json_text(report: dict) -> str:
    """The report as JSON text as ``JSON.stringify`` writes it, then escaped by ``harness.util.untrusted.json_text``."""
    return untrusted.json_text(stringify(report, indent=2)) + "\n"


def _progress(redactor, line: str) -> None:
    print(escape(redactor.text(line)), file=sys.stderr, flush=True)


def _tokens(text: str) -> int:
    cleaned = text.replace(",", "").replace("_", "")
    if not cleaned.isdigit() or len(cleaned) > 12:
        raise argparse.ArgumentTypeError(f"expected a whole number of tokens, got {text[:40]!r}")
    return int(cleaned)


def _increase(text: str):
    try:
        return parse_increase(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


