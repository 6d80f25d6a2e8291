"""``mcp-context-cost`` command line: one subcommand per module, each exposing ``register``."""

from __future__ import annotations

import argparse
import importlib
import sys

from harness import __version__
from harness.probe.dumpable import not_dumpable
from harness.util import urls, user_cache
from harness.util.untrusted import line, lines


COMMAND_MODULES = (
    "harness.cli.measure_cmd",
    "harness.cli.verify_cmd",
    "harness.cli.slice_cmd",
    "harness.cli.sweep_cmd",
    "harness.cli.regen_cmd",
    "harness.cli.divergence_cmd",
    "harness.cli.cross_check_cmd",
    "harness.cli.capability_probe_cmd",
    "harness.cli.audit_cmd",
    "harness.cli.import_cmd",
    "harness.cli.pins_cmd",
    "harness.cli.releases_cmd",
)


def _commands(names=COMMAND_MODULES):
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return modules


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command`` known, only the module registering it is imported
    (``measure`` does not pay for the sweep's imports).
    """
    module = command.replace("-", "_") + "_cmd" if command and not command.startswith("-") else None
    only = tuple(name for name in COMMAND_MODULES if name.rsplit(".", 1)[1] == module)
    if only:
        parser, registered = _parser(only)
        if command in registered:
            return parser
    return _parser(COMMAND_MODULES)[0]


def _parser(names) -> tuple[argparse.ArgumentParser, set[str]]:
    parser = argparse.ArgumentParser(
        prog="mcp-context-cost",
        description="What an MCP server costs in context tokens (o200k_base), measured exactly. "
                    "Only `sweep --commit` makes a git commit; every other command reads or writes files and "
                    "commits nothing.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _commands(names):
        module.register(sub)
    return parser, set(sub.choices)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code.

    Common to every command: 2 bad input, 130 interrupted, ``harness_bug.EXIT_CODE`` (70) for a harness
    bug, reported on one line naming the server.
    """
    not_dumpable()  # first: nothing this run reads or is handed is readable by another process of the user
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    if (problem := _shown_setting_problem() or user_cache.problem()) is not None:
        print(line(f"error: {problem}"), file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place an unexpected exception becomes an exit code
        return _internal_error(exc, args)


def _shown_setting_problem() -> str | None:
    """What is wrong with ``sandbox.SHOWN_VARIABLE``, checked before any launch would fail on it."""
    from harness.probe import sandbox  # probe's heavier modules load only when needed: --help imports this module

    for folder in sandbox.shown_dirs(()):
        try:
            for checked in sandbox.checked_dirs([folder]):
                sandbox.folder_masks(checked)
        except ValueError as exc:
            return f"{sandbox.SHOWN_VARIABLE}: {exc}"
    return None


def _internal_error(exc: Exception, args) -> int:
    from harness.probe import harness_bug  # only for a harness bug

    detail = harness_bug.traceback_text(exc)
    if detail:
        print(lines(detail.rstrip("\n")), file=sys.stderr)
    print(line(harness_bug.message(exc, _subject(args))), file=sys.stderr)
    return harness_bug.EXIT_CODE


def _subject(args) -> str | None:
    """The server the command was working on, for the internal-error line."""
    for name in ("server", "name", "url"):
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            return f"server {urls.shown_source(value)!r}"
    return None


if __name__ == "__main__":
    sys.exit(main())
