"""The pull-request comment, rendered from the head and base records alone, and the artifact that carries them.

Rule: docs/ACTION.md, "Pull requests: the comparison and the comment".
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from typing import cast
from pathlib import Path

from harness.action import event
from harness.action import summary
from harness.action.comparison import ToolDelta, counted, tool_deltas
from harness.action.ghapi import MARKER
from harness.audit.suggest import markdown
from harness.core.jsparse import parse
from harness.core.record import Record
from harness.core.rederive import NotARecord, rederive
from harness.pages.badge import badge_for
from harness.util import atomic, bounded, schemas

# GitHub links some plain text after rendering Markdown, where a backslash escape no longer shows:
# @mentions (a notification), #123, GH-123 and owner/repo#123 references (a backlink on that issue) and
# bare URLs. A word joiner after the "@" and "#" and inside "://" leaves the text as it reads.
_LINKED_LATER = {"\\@": "@\u2060", "\\#": "#\u2060", "\\:\\/\\/": ":\u2060//", "www\\.": "www\u2060."}
_GH_REFERENCE = re.compile(r"\b(GH)(?=\\-\d)", re.IGNORECASE)  # GH-123 is an issue reference too
MAX_TOOL_ROWS = 100
MAX_BODY_CHARS = 60_000
HEAD, BASE, PULL = "head.measurement.json", "base.measurement.json", "pull-request.json"
MAX_PULL_BYTES = 4096


class ArtifactError(ValueError):
    """The comment artifact cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Artifact:
    """A loaded comment artifact (``base`` is ``None`` when the run had nothing to compare with)."""

    pull: dict
    head: Record
    base: Record | None


def text(value: object) -> str:
    """``value`` as inert comment text: :func:`harness.action.summary.text`, then nothing GitHub would link later."""
    escaped = summary.text(value)
    for before, after in _LINKED_LATER.items():
        escaped = escaped.replace(before, after)
    return _GH_REFERENCE.sub("\\1\u2060", escaped)


def render(head: Record, base: Record | None, base_label: str, *, base_problem: str | None = None,
           tool_shape: str | None = None) -> str:
    """The comment's Markdown for ``head`` against ``base`` (``None``: no comparison, and
    ``base_problem`` says why)."""
    name = text(head["server"])
    lines = [MARKER, f"### Context cost: {name}", ""]
    tokens = head.get("totalTokens")
    if tokens is None:
        lines += [f"This commit's server could not be measured: status **{text(head['status'])}** — "
                  f"{text((head.get('notes') or ['no note'])[0])}", ""]
    elif base is None or base.get("totalTokens") is None:
        why = base_problem or (f"the base's server has status {base['status']}" if base else "no base to compare")
        lines += [f"**{tokens:,} tokens** for {head['toolCount']} tools (o200k_base). Not compared: {text(why)}.", ""]
    elif base["canonicalSha256"] == head["canonicalSha256"]:
        lines += [f"No change in context cost: {tokens:,} tokens, {head['toolCount']} tools — the tool list is "
                  f"byte-identical to {text(base_label)}'s.", ""]
        return _finish(lines, head)
    else:
        lines += _totals(base, head, base_label)
        deltas = tool_deltas(base, head)
        lines += _table(deltas)
        lines += _advice(head, deltas, tool_shape)
    lines += _compatibility(head)
    return _finish(lines, head)


def _totals(base: Record, head: Record, label: str) -> list[str]:
    before, after = counted(base["totalTokens"]), counted(head["totalTokens"])
    tools_before, tools_after = counted(base["toolCount"]), counted(head["toolCount"])
    delta = after - before
    pct = "" if before == 0 else f" ({100 * delta / before:+.1f}%)"
    word = "heavier" if delta > 0 else "lighter" if delta < 0 else "the same size"
    return ["| | " + text(label) + " | this commit | change |", "|---|---|---|---|",
            f"| tokens (o200k_base) | {before:,} | {after:,} | **{delta:+,}**{pct} |",
            f"| tools | {tools_before} | {tools_after} | {tools_after - tools_before:+,} |", "",
            f"Every session that loads this server starts **{abs(delta):,} tokens {word}**." if delta else
            "Every session that loads this server pays the same number of tokens.", ""]


def _table(deltas: list[ToolDelta]) -> list[str]:
    if not deltas:
        return ["No tool was added, removed or changed; the tool list still differs (e.g. its order).", ""]
    lines = ["| tool | change | tokens before | after | delta | fields changed |", "|---|---|---|---|---|---|"]
    for d in deltas[:MAX_TOOL_ROWS]:
        fields = ", ".join(f"{text(f.name)} {_signed(f)}" for f in d.fields) or "—"
        lines.append(f"| {text(d.name)} | {d.kind} | {_n(d.before)} | {_n(d.after)} | {d.delta:+,} | {fields} |")
    if len(deltas) > MAX_TOOL_ROWS:
        lines.append(f"\n… and {len(deltas) - MAX_TOOL_ROWS} more changed tools (see the job summary)")
    lines += ["", "Per-tool and per-field counts are each counted on their own (they do not sum to the total)."]
    return lines + [""]


def _signed(change) -> str:
    if change.before is None:
        return f"(new, {change.after:,})"
    if change.after is None:
        return f"(gone, {-change.before:+,})"
    return f"({change.delta:+,})"


def _advice(head: Record, deltas: list[ToolDelta], source: str | None) -> list[str]:
    changed = {d.name for d in deltas if d.kind != "removed"}
    rows = [t for t in head.get("tools") or [] if str(t["name"]) in changed]
    section = markdown(rows, source, text, limit=MAX_TOOL_ROWS)
    return [line.replace("### Tool shape", "#### Tool shape of the changed tools") for line in section]


def _compatibility(record: Record) -> list[str]:
    notes = record.get("compatibility")
    if not notes:
        return []
    items = notes if isinstance(notes, list) else [notes]
    lines = ["#### Compatibility", ""]
    for item in items[:MAX_TOOL_ROWS]:
        shown = ("; ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in item.items())
                 if isinstance(item, dict) else item)
        lines.append(f"- {text(shown)}")
    return lines + [""]


def badge_markdown(record: Record) -> str:
    """The record's badge as a shields.io static image (label, message and colour are ours)."""
    badge = badge_for(record["status"], record.get("totalTokens"))
    parts = [urllib.parse.quote(str(badge[k]).replace("-", "--").replace("_", "__"), safe="")
             for k in ("label", "message", "color")]
    return f"![{text(badge['label'])}: {text(badge['message'])}](https://img.shields.io/badge/{'-'.join(parts)})"


def _finish(lines: list[str], head: Record) -> str:
    lines += [badge_markdown(head), "",
              "<sub>Measured by mcp-context-cost: the o200k_base tokens of the canonical tools/list "
              "(re-derivable from the record in the job's artifact).</sub>"]
    body = "\n".join(lines).rstrip() + "\n"
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS].rsplit("\n", 1)[0] + "\n\n… (cut: the full table is in the job summary)\n"
    return body


def _n(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def write_artifact(folder: Path, pull: event.PullRequest, head_path: Path, base_path: Path | None) -> Path:
    """Write the comment artifact into ``folder`` (the records copied byte for byte)."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in (HEAD, BASE):
        (folder / stale).unlink(missing_ok=True)
    atomic.write_text(folder / HEAD, head_path.read_text(encoding="utf-8"))
    if base_path is not None:
        atomic.write_text(folder / BASE, base_path.read_text(encoding="utf-8"))
    atomic.write_text(folder / PULL, json.dumps({"number": pull.number, "baseSha": pull.base_sha,
                                                 "headSha": pull.head_sha, "repository": pull.repository}) + "\n")
    return folder


def load_artifact(folder: Path) -> Artifact:
    """Read, validate and re-derive a comment artifact. Raises :class:`ArtifactError`."""
    pull = _pull(folder / PULL)
    head = _record(folder / HEAD)
    base = _record(folder / BASE) if (folder / BASE).exists() or (folder / BASE).is_symlink() else None
    return Artifact(pull, head, base)


def _pull(path: Path) -> dict:
    if path.is_symlink():
        raise ArtifactError(f"{path.name}: a symbolic link, not a pull request")
    try:
        pull = json.loads(bounded.read_regular(path, MAX_PULL_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise ArtifactError(f"{path.name}: cannot be read ({exc})") from None
    if not (isinstance(pull, dict) and isinstance(pull.get("number"), int) and not isinstance(pull["number"], bool)
            and pull["number"] > 0 and all(isinstance(pull.get(k), str) and event.is_sha(pull[k])
                                           for k in ("baseSha", "headSha"))
            and isinstance(pull.get("repository"), str) and event.is_repository(pull["repository"])):
        raise ArtifactError(f"{path.name}: not a pull request (number, baseSha, headSha, repository)")
    return pull


def _record(path: Path) -> Record:
    if path.is_symlink():
        raise ArtifactError(f"{path.name}: a symbolic link, not a record")
    try:
        parsed = parse(bounded.read_regular(path, bounded.MAX_RECORD_BYTES).decode("utf-8"))
        schemas.check("measurement", parsed, where=path.name)
    except (OSError, ValueError, RecursionError) as exc:  # SchemaViolation, TooLarge, WireJSONError: ValueErrors
        raise ArtifactError(f"{path.name}: not a valid measurement record ({str(exc)[:300]})") from None
    record = cast(Record, parsed)  # the schema check above makes it one
    if record.get("totalTokens") is not None:  # a status without a number has nothing to re-derive
        try:
            check = rederive(record)
        except NotARecord as exc:
            raise ArtifactError(f"{path.name}: {exc}") from None
        if not check.ok:
            raise ArtifactError(f"{path.name}: its numbers do not re-derive from its capture "
                                f"({', '.join(check.mismatches)} differ)")
    # The capture keeps JSON.parse's floats: canonical JSON of a float is JavaScript's.
    return cast(Record, {k: v if k == "rawToolsCapture" else _integers(v) for k, v in record.items()})


def _integers(value: object) -> object:
    """A record parsed with JSON.parse semantics holds floats for integers; give them back."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integers(v) for v in value]
    return value
