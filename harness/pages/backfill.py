"""``regen --backfill``: rebuild every entry's tool vectors from the repository's git history.

Public: :func:`backfill`, :func:`record_versions`, :class:`BackfillError`. Rules: docs/PAGES.md,
"Tool vectors and backfill".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import git

from harness.core.jsparse import WireJSONError, parse
from harness.core.rederive import refusal
from harness.core.record import NUMBERED
from harness.pages import tool_vectors
from harness.pages.published_records import RecordError
from harness.pages.tool_vectors import VectorHistory
from harness.util import untrusted
from harness.util.bounded import MAX_RECORD_BYTES
from harness.util.schemas import SchemaViolation

NULL_SHA = "0" * 40
REGULAR_FILES = ("100644", "100755")  # git's modes of a file's bytes (not 120000 symlink, 160000 submodule)


class BackfillError(ValueError):
    """The history cannot be walked (no repository, or a shallow clone)."""


@dataclass
class Backfill:
    """Vectors rebuilt from history: ``vectors`` by catalog name, how many ``commits`` and record
    ``versions`` were read, and one ``skipped`` line per version left out."""

    vectors: dict[str, VectorHistory]
    commits: int = 0
    versions: int = 0
    skipped: list[str] = field(default_factory=list)


def backfill(root: Path, names: list[str]) -> Backfill:
    """Walk the history of ``results/<name>/measurement.json`` for every name in ``names`` (the
    catalog) and return the vectors it implies. See the module docstring for errors."""
    result = Backfill({name: VectorHistory(name) for name in names})
    for name, record, where in record_versions(root, names, result):
        try:
            result.vectors[name] = tool_vectors.advance(result.vectors[name], record, where)
        except RecordError as exc:
            result.skipped.extend(exc.errors)
        except SchemaViolation as exc:
            result.skipped.append(f"{where}: {exc}")
    return result


def record_versions(root: Path, names: list[str], tally: Backfill | None = None):
    """Yield ``(name, record, "<path> at <commit>")`` for each committed version of each record, oldest
    first along the first-parent history; ``tally`` counts what was read and skipped."""
    tally = tally if tally is not None else Backfill({})
    repo, prefix = _repo(Path(root))
    if not repo.head.is_valid():
        return
    wanted = {f"{prefix}results/{name}/measurement.json": name for name in names}
    changes = _changes(repo, prefix)
    tally.commits = len({change[0] for change in changes})
    for commit, path, mode, blob in changes:
        name = wanted.get(path)
        if name is None or blob == NULL_SHA:  # another file, or the record was deleted
            continue
        tally.versions += 1
        where = f"{path} at {commit[:12]}"
        record = _read(repo, mode, blob, name, where, tally.skipped)
        if record is not None:
            yield name, record, where


def _repo(root: Path) -> tuple[git.Repo, str]:
    """The repository holding ``root`` and ``root``'s path inside it (``""`` or ``"sub/dir/"``)."""
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise BackfillError(f"{root} is not inside a git repository: --backfill reads the history of "
                            "results/<server>/measurement.json from git") from None
    if repo.git.rev_parse("--is-shallow-repository").strip() == "true":
        raise BackfillError(f"{repo.working_tree_dir} is a shallow clone: its oldest commits are missing, so the "
                            "vectors would start late; fetch the whole history first (git fetch --unshallow, "
                            "or actions/checkout with fetch-depth: 0)")
    if repo.working_tree_dir is None:
        raise BackfillError(f"{root} is in a bare git repository: --backfill needs a checkout")
    relative = Path(root).resolve().relative_to(Path(repo.working_tree_dir).resolve()).as_posix()
    if any(c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7f for c in relative):
        # git prints such a path quoted however it is configured: no record path would match.
        raise BackfillError(f"{untrusted.escape(relative)} (the root inside {repo.working_tree_dir}) holds a quote, "
                            "a backslash or a control character, which git prints quoted: run from a checkout "
                            "whose path has none")
    return repo, "" if relative == "." else relative + "/"


def _changes(repo: git.Repo, prefix: str) -> list[tuple[str, str, str, str]]:
    """``(commit, path, new mode, new object sha)`` for every change to a ``results/*/measurement.json``
    along the first-parent history, oldest first (a merge compared with its first parent)."""
    # core.quotePath off: a path with bytes outside ASCII (a checkout under ``données/``) is printed
    # as it is, not as a quoted octal string that matches no record path — which silently read no
    # version at all. The root's own path is matched literally (glob characters escaped).
    out = repo.git(c="core.quotePath=false").log(
        "--first-parent", "--reverse", "--format=commit %H", "--raw", "--no-abbrev", "--no-renames",
        "--diff-merges=first-parent", "--", f":(glob){_literal(prefix)}results/*/measurement.json")
    changes, commit = [], None
    for line in out.splitlines():
        if line.startswith("commit "):
            commit = line[7:].strip()
        elif line.startswith(":") and commit:
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) >= 5:
                # A path git had to quote (unusual bytes) is kept quoted: it is no catalog slug.
                changes.append((commit, path, parts[1], parts[3]))
    return changes


def _literal(path: str) -> str:
    """``path`` matched literally inside a ``:(glob)`` pathspec."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in path)


def _read(repo: git.Repo, mode: str, blob: str, name: str, where: str, skipped: list[str]) -> dict | None:
    """The record in ``blob``, or ``None`` (with a line in ``skipped``) when it is not one."""
    if mode not in REGULAR_FILES:
        kind = {"120000": "a symbolic link", "160000": "a submodule"}.get(mode, f"git mode {mode}")
        skipped.append(f"{where}: {kind}, not a file's bytes: not read as a record")
        return None
    try:
        size = repo.odb.info(bytes.fromhex(blob)).size
        if size > MAX_RECORD_BYTES:
            skipped.append(f"{where}: {size:,} bytes, larger than a record may be ({MAX_RECORD_BYTES:,}): not read")
            return None
        text = repo.odb.stream(bytes.fromhex(blob)).read().decode("utf-8")
        record = parse(text)
    except (ValueError, UnicodeDecodeError, WireJSONError, OSError) as exc:
        skipped.append(f"{where}: not readable as a record: {exc}")
        return None
    if not isinstance(record, dict) or record.get("server") != name:
        skipped.append(f"{where}: not the record of {name!r}")
        return None
    if record.get("status") in NUMBERED and not isinstance(record.get("rawToolsCapture"), list):
        skipped.append(f"{where}: {record.get('status')} record without a rawToolsCapture array")
        return None
    forged = refusal(record, where)  # a version whose figures do not re-derive gives no vector
    if forged:
        skipped.append(forged)
        return None
    return record
