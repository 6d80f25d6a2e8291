"""The closing summary of a sweep: ``show`` prints the headline, counts per status, one line per
server with its reason, and what was written and how to commit or discard it.
"""

from __future__ import annotations

import shlex
import sys
from collections import Counter
from collections.abc import Set as AbstractSet
from pathlib import Path

import git

from harness.core.record import NUMBERED, STATUSES, Record
from harness.db import failure_reason
from harness.db.progress import is_terminal
from harness.db.sweep import SweepResult
from harness.util.published import BADGES, HISTORY, PUBLISHED, RECORD_FILE
from harness.util.untrusted import escape, line as safe_line



def show(result: SweepResult, date, *, root: Path | None = None, written: list[str] | None = None, commit: bool = False,
         sha: str | None = None, last: str | None = None, stream=None) -> None:
    """Print the summary of ``result`` for ``date``; ``last`` replaces the computed last line."""
    stream = stream or sys.stdout
    from rich.console import Console  # rich loads only where a summary is printed (as in db.progress)

    console = Console(file=stream, highlight=False, emoji=False, soft_wrap=not is_terminal(stream))
    # a server the machine could not measure is shown by that record; its published one stays as it was
    environment = getattr(result, "environment", None) or {}
    records, unchanged = {**result.records, **environment}, set(result.unchanged) - set(environment)
    console.print(headline(records, unchanged, date), markup=False)
    if records:
        console.print(counts_table(records, unchanged))
    if records:
        console.print('servers (a failure with its reason; "[environment]": this machine\'s network or toolchain '
                      "failed, not the server):", markup=False)
        for text in server_lines(records, unchanged, set(environment)):
            console.print(text, markup=False)
    console.print(last if last is not None else closing_line(root or Path("."), written or [], commit, sha, date),
                  markup=False)


def headline(records: dict[str, Record], unchanged: set[str], date) -> str:
    """``sweep D: N servers: a measured, b failed (c environment); d of the N unchanged``."""
    measured = sum(1 for r in records.values() if r.get("status") in NUMBERED)
    failed = len(records) - measured
    env = sum(1 for r in records.values() if r.get("status") not in NUMBERED and failure_reason.is_environment(r))
    text = (f"sweep {date}: {len(records)} server{'s' if len(records) != 1 else ''}: {measured} measured, "
            f"{failed} failed" + (f" ({env} environment)" if env else ""))
    if not unchanged:
        return text
    if len(unchanged) < len(records):
        return text + f"; {len(unchanged)} of the {len(records)} unchanged"
    return text + ("; unchanged" if len(records) == 1 else f"; all {len(records)} unchanged")


def counts_table(records: dict[str, Record], unchanged: set[str]):
    """A ``rich`` table: per status, servers, unchanged and environment failures."""
    from rich.table import Table  # rich loads only when a table is printed

    by_status = Counter(str(r.get("status")) for r in records.values())
    kept = Counter(str(records[s].get("status")) for s in unchanged if s in records)
    env = Counter(str(r.get("status")) for r in records.values() if r.get("status") not in NUMBERED
                  and failure_reason.is_environment(r))
    order = sorted(by_status, key=lambda s: (STATUSES.index(s) if s in STATUSES else len(STATUSES), s))
    table = Table(show_footer=True, box=None, pad_edge=False)
    table.add_column("status", footer="total")
    table.add_column("servers", justify="right", footer=str(sum(by_status.values())))
    table.add_column("unchanged", justify="right", footer=str(sum(kept.values())))
    table.add_column("environment", justify="right", footer=str(sum(env.values())))
    for status in order:
        table.add_row(escape(status), str(by_status[status]), str(kept[status]),
                      "-" if status in NUMBERED else str(env[status]))
    return table


def server_lines(records: dict[str, Record], unchanged: set[str], kept: AbstractSet[str] = frozenset()) -> list[str]:
    """One line per server: status, then its number or its reason, whole; ``kept``: published
    records kept over a machine failure.
    """
    rows = sorted(records.items())
    width = max((len(safe_line(name)) for name, _ in rows), default=0)
    status_width = max((len(safe_line(rec.get("status"))) for _, rec in rows), default=0)
    out = []
    for name, rec in rows:
        if rec.get("status") in NUMBERED:
            assert rec["toolCount"] is not None and rec["totalTokens"] is not None, "a numbered record has its numbers"
            tools = int(rec["toolCount"])
            what = f"{int(rec['totalTokens']):,} tokens, {tools} tool{'s' if tools != 1 else ''}"
        else:
            what = ("[environment] " if failure_reason.is_environment(rec) else "") + escape(failure_reason.reason(rec))
        suffix = " (unchanged)" if name in unchanged else ""
        suffix += " (the published record is kept)" if name in kept else ""
        out.append(f"  {safe_line(name):<{width}}  {safe_line(rec.get('status')):<{status_width}}  {what}{suffix}")
    return out


def closing_line(root: Path, written: list[str], commit: bool, sha: str | None, date) -> str:
    """What was written, whether it was committed, and the command to commit or discard it."""
    what = describe_written(written)
    if commit:
        if sha:
            return f"committed {sha[:12]}: {what}; to undo it: {_git(root)} revert {sha[:12]}"
        return f"{what}; nothing differs from HEAD, so nothing was committed"
    changes = _changes(root)
    if changes is None:
        return f"{what} under {root}; not a git repository, so nothing was committed"
    tracked, untracked = changes
    if not tracked and not untracked:
        return f"{what}; nothing differs from HEAD, so there is nothing to commit"
    git, groups = _git(root), " ".join(sorted(set(tracked) | set(untracked), key=PUBLISHED.index))
    discard = []
    if tracked:
        discard.append(f"{git} checkout -- {' '.join(sorted(set(tracked), key=PUBLISHED.index))}")
    if untracked:
        discard.append(f"{git} clean -fdq -- {' '.join(sorted(set(untracked), key=PUBLISHED.index))}")
    count = sum(tracked.values()) + sum(untracked.values())
    return (f"{what}: {count} file{'s' if count != 1 else ''} differ from HEAD, NOT committed — "
            f"commit: {git} add -A -- {groups} && {git} commit -m 'sweep {date}' · discard: {' && '.join(discard)}")


def describe_written(written: list[str]) -> str:
    """``wrote 3 records, 3 badges, history.csv and the pages`` from repository paths."""
    records = sum(1 for p in written if p.endswith("/" + RECORD_FILE))
    badges = sum(1 for p in written if p.startswith(BADGES + "/"))
    parts = [f"{records} record{'s' if records != 1 else ''}"] if records else []
    parts += [f"{badges} badge{'s' if badges != 1 else ''}"] if badges else []
    parts += [HISTORY] if HISTORY in written else []
    if not parts:
        return "regenerated the pages; no record, badge or history row changed"
    return "wrote " + ", ".join(parts) + " and the pages"


def _git(root: Path) -> str:
    here = Path.cwd().resolve()
    return "git" if Path(root).resolve() == here else f"git -C {shlex.quote(str(root))}"


def _changes(root: Path) -> tuple[Counter[str], Counter[str]] | None:
    """``(tracked changes, untracked files)`` per published path, or None outside a repository."""
    try:
        repo = git.Repo(root)
        output = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--", *PUBLISHED)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError):
        return None
    tracked: Counter[str] = Counter()
    untracked: Counter[str] = Counter()
    for entry in output.split("\0"):
        if len(entry) < 4 or entry[2] != " ":  # not an "XY path" entry (a rename's old name)
            continue
        group = next((p for p in PUBLISHED if entry[3:] == p or entry[3:].startswith(p + "/")), None)
        if group is not None:
            (untracked if entry.startswith("??") else tracked)[group] += 1
    return tracked, untracked
