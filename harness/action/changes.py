"""Tool by tool, what changed between two records' captures, down to the field that grew.

Tools are paired by name (the n-th tool of a repeated name with the n-th of the same name), as in
:mod:`harness.action.baseline`. For a tool present on both sides every field of the tool object
is compared by its canonical JSON (``harness.core.canonical``), and a field whose text differs is
reported with its tokens before and after (o200k_base of that field's value alone: a diagnostic,
like the per-tool figures, not a part of the total). The named fields are those a client reads
— ``description``, ``inputSchema``, ``outputSchema``, ``annotations``, ``title`` — and any other
field is reported under its own name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.core import canonical, tokenizer

NAMED_FIELDS = ("description", "inputSchema", "outputSchema", "annotations", "title")


@dataclass(frozen=True)
class FieldChange:
    """One field of a tool: tokens of its value before and after (``None`` where absent)."""

    name: str
    before: int | None
    after: int | None

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


@dataclass(frozen=True)
class ToolDelta:
    """One tool that is new, gone or changed: ``kind`` is ``added``, ``removed``, ``grown``,
    ``shrunk`` or ``changed`` (same size, other text); ``before``/``after`` its per-tool tokens."""

    name: str
    kind: str
    before: int | None
    after: int | None
    fields: tuple[FieldChange, ...] = field(default=())

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


def tool_deltas(base: dict, head: dict) -> list[ToolDelta]:
    """Every tool that differs between the records ``base`` and ``head`` (both with a capture),
    largest growth first, then the removed tools."""
    before, after = _paired(base), _paired(head)
    found: list[ToolDelta] = []
    for key, (tokens, tool) in after.items():
        if key not in before:
            found.append(ToolDelta(key[0], "added", None, tokens, _fields({}, tool)))
            continue
        old_tokens, old_tool = before[key]
        fields = _fields(old_tool, tool)
        if fields or tokens != old_tokens:
            kind = "grown" if tokens > old_tokens else "shrunk" if tokens < old_tokens else "changed"
            found.append(ToolDelta(key[0], kind, old_tokens, tokens, fields))
    found.sort(key=lambda d: -d.delta)
    found += [ToolDelta(key[0], "removed", tokens, None, _fields(tool, {}))
              for key, (tokens, tool) in before.items() if key not in after]
    return found


def _paired(record: dict) -> dict[tuple[str, int], tuple[int, object]]:
    rows, capture = record.get("tools") or [], record.get("rawToolsCapture") or []
    seen: dict[str, int] = {}
    paired = {}
    for index, row in enumerate(rows):
        name = str(row["name"])
        seen[name] = seen.get(name, 0) + 1
        paired[(name, seen[name])] = (int(row["tokens"]), capture[index] if index < len(capture) else {})
    return paired


def _fields(before: object, after: object) -> tuple[FieldChange, ...]:
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    names = [n for n in NAMED_FIELDS if n in old or n in new]
    names += sorted(n for n in {*old, *new} if n not in NAMED_FIELDS and n != "name")
    changes = []
    for name in names:
        old_text, new_text = _text(old, name), _text(new, name)
        if old_text != new_text:
            changes.append(FieldChange(name, _count(old_text), _count(new_text)))
    return tuple(changes)


def _text(tool: dict, name: str) -> str | None:
    return canonical.stringify(tool[name]) if name in tool and tool[name] is not None else None


def _count(text: str | None) -> int | None:
    return None if text is None else tokenizer.count(text)
