"""``mcp-context-cost`` command line: one subcommand per module, each exposing ``register``."""

from __future__ import annotations

import argparse
import sys

from harness import __version__


COMMAND_MODULES = (
    "harness.cli.measure_cmd",
    "harness.cli.verify_cmd",
    "harness.db.slice_cmd",
    "harness.cli.sweep_cmd",
    "harness.publish.regen_cmd",
    "harness.audit.audit_cmd",
)


def _commands():
    import importlib

    modules = []
    for name in COMMAND_MODULES:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return modules


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-context-cost",
        description="What an MCP server costs in context tokens (o200k_base), measured exactly.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _commands():
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
