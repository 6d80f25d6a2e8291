"""``mcp-context-cost verify PATH_OR_URL [--json]``: re-derive a published record's numbers, input
bounded (docs/SECURITY.md, 'Bounded input'). Exit 0 all match, 1 a mismatch, 2 unreadable or no
capture.
"""

from __future__ import annotations

import json
import sys

from harness.core.jsparse import WireJSONError, parse
from harness.core.rederive import NotARecord, rederive
from harness.core.tokenizer import Uncountable
from harness.db.failure_reason import decisive
from harness.util import bounded, untrusted
from harness.util.urls import masked, shown_source
from harness.util.cliargs import seconds

MAX_RECORD_BYTES = bounded.MAX_RECORD_BYTES
DEFAULT_DEADLINE_SECONDS = 30.0


def register(sub) -> None:
    p = sub.add_parser("verify", help="re-derive tokens, hash and tool count from a measurement.json (reads only)",
                       description="Re-derive totalTokens, canonicalSha256, toolCount and canonicalLength from a "
                                   "record's own rawToolsCapture and compare them with the published ones. Reads "
                                   "only: writes nothing, commits nothing. Exit codes: 0 everything matches; 1 a "
                                   "mismatch (the field is named); 2 the input cannot be read or is not a record "
                                   "with a capture.")
    p.add_argument("source", metavar="PATH_OR_URL", help="a measurement.json path or an http(s) URL")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--timeout", type=seconds, default=DEFAULT_DEADLINE_SECONDS, metavar="SECONDS",
                   help="overall deadline for fetching a URL, 1-600 seconds (default 30)")
    p.set_defaults(func=run)



def read_source(source: str, timeout: float = DEFAULT_DEADLINE_SECONDS, max_bytes: int = MAX_RECORD_BYTES) -> str:
    """The text at ``source`` (URL within ``timeout`` or regular file, at most ``max_bytes``);
    OSError, ValueError for the size.
    """
    try:
        if source.startswith(("http://", "https://")):
            data = bounded.fetch(source, timeout, max_bytes)
        else:
            data = bounded.read_regular(source, max_bytes)
    except bounded.DeadlineExceeded as exc:
        raise OSError(f"cannot fetch: {exc}") from None
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if source.startswith(("http://", "https://")):  # the line a person acts on, not the exception chain
            raise OSError(f"cannot fetch: {decisive(why)}") from None
        raise OSError(f"cannot read: {why}") from None
    return data.decode("utf-8", errors="replace")


def run(args) -> int:
    try:
        comparison = rederive(parse(read_source(args.source, args.timeout)))
    except (OSError, WireJSONError, NotARecord) as exc:
        return _report_unreadable(args, masked(str(exc), args.source))
    except (Uncountable, TypeError) as exc:  # TypeError: a capture stringify rejects
        return _report_unreadable(args, f"rawToolsCapture cannot be counted ({masked(str(exc), args.source)})")
    source = shown_source(args.source)
    if args.json:
        print(untrusted.json_text(json.dumps({"source": source, "ok": comparison.ok,
                                              "mismatches": list(comparison.mismatches),
                                              "published": comparison.published, "derived": comparison.derived},
                                             indent=2)))
    elif comparison.ok:
        print(untrusted.line(f"OK {source}: every figure re-derives from the record's own capture"))
        for text in figure_lines(comparison.derived):
            print(untrusted.line(text))
    else:
        for field in comparison.mismatches:
            print(untrusted.line(f"MISMATCH {field}: published {comparison.published[field]}, "
                                 f"derived {comparison.derived[field]}"))
    return 0 if comparison.ok else 1


def figure_lines(derived: dict) -> list[str]:
    """One aligned line per re-derived figure, headline fields first, then each side list."""
    groups: dict[str, dict] = {}
    for field, value in derived.items():
        group, _, name = field.rpartition(".")
        groups.setdefault(group, {})[name] = value
    lines = []
    for group, fields in groups.items():
        indent = "    " if group else "  "
        if group:
            lines.append(f"  {group}:")
        width = max(map(len, fields))
        lines += [f"{indent}{name:<{width}}  {value}" for name, value in fields.items()]
    return lines


def _report_unreadable(args, message: str) -> int:
    if args.json:
        print(untrusted.json_text(json.dumps({"source": shown_source(args.source), "ok": False, "error": message})))
    else:
        print(untrusted.line(f"cannot verify {shown_source(args.source)}: {message}"), file=sys.stderr)
    return 2
