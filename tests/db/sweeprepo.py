"""Helpers for the sweep acceptance tests: throwaway git repositories holding a catalog
of fixture servers, the sweep run in-process, and readers for what it published.

Fixture commands are ``python3 <absolute path>`` — the bare program name, resolved on the child's
PATH — so that emptying PATH (the simulated harness fault) makes every one of them fail to start.
"""

from __future__ import annotations

import contextlib
import csv
import io
import shlex
import subprocess
from pathlib import Path

import yaml

from harness.core.jsparse import parse
from harness.db import history
from harness.db.commit import BOT
from harness.pages.badge import badge_for
from harness.util import schemas
from tests.conftest import FIXTURE_SERVERS

FAIL_COMMAND = 'python3 -c "import sys; sys.exit(1)"'
PUBLISHED = ("results", "badges", "history.csv", "docs")  # harness.db.commit.PUBLISHED


def fixture(name: str, *args: str) -> str:
    """``python3 /abs/tests/fixtures/servers/<name>.py args...`` (python3 found on the child PATH)."""
    return shlex.join(["python3", str(FIXTURE_SERVERS / f"{name}.py"), *args])


def well_behaved(tools: int = 3, *extra: str) -> str:
    return fixture("well_behaved", "--tools", str(tools), *extra)


def catalog_text(entries, *, reference: str | None = None, cycle_weeks: int | None = None) -> str:
    """A ``servers.yaml`` for ``entries``: (name, command) pairs or full entry dicts."""
    doc: dict = {}
    if reference is not None:
        doc["reference"] = reference
    if cycle_weeks is not None:
        doc["cycleWeeks"] = cycle_weeks
    doc["servers"] = [e if isinstance(e, dict) else {"name": e[0], "command": e[1]} for e in entries]
    return yaml.safe_dump(doc, sort_keys=False, width=1000)


def git(root: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def init_repo(root: Path, catalog: str) -> Path:
    """A new repository at ``root`` whose first commit holds ``servers.yaml`` (a human author)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test Human")
    git(root, "config", "user.email", "human@example.com")
    git(root, "config", "commit.gpgsign", "false")
    (root / "servers.yaml").write_text(catalog, encoding="utf-8")
    git(root, "add", "servers.yaml")
    git(root, "commit", "-q", "-m", "catalog")
    return root


def commit_catalog(root: Path, catalog: str, message: str = "catalog change") -> str:
    (root / "servers.yaml").write_text(catalog, encoding="utf-8")
    git(root, "add", "servers.yaml")
    git(root, "commit", "-q", "-m", message)
    return head(root)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def porcelain(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


def sweep(root: Path, *args: str) -> tuple[int, str, str]:
    """Run ``mcp-context-cost sweep --root root args...`` in-process; (exit code, stdout, stderr)."""
    from harness.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["sweep", "--root", str(root), *args])
    return code, out.getvalue(), err.getvalue()


def working_files(root: Path) -> dict[str, bytes]:
    """Every published file in the working tree: repository path → bytes."""
    files = {}
    for top in PUBLISHED:
        path = root / top
        if path.is_file():
            files[top] = path.read_bytes()
        elif path.is_dir():
            for p in sorted(path.rglob("*")):
                if p.is_file():
                    files[str(p.relative_to(root))] = p.read_bytes()
    return files


def head_files(root: Path, rev: str = "HEAD") -> dict[str, bytes]:
    """Every published file in commit ``rev``: repository path → bytes."""
    names = git(root, "ls-tree", "-r", "--name-only", rev, "--", *PUBLISHED).split()
    out = {}
    for name in names:
        out[name] = subprocess.run(["git", "show", f"{rev}:{name}"], cwd=root, capture_output=True,
                                   check=True).stdout
    return out


def records(root: Path) -> dict[str, dict]:
    """server → parsed ``results/<server>/measurement.json`` of the working tree."""
    return {p.parent.name: parse(p.read_text(encoding="utf-8"))
            for p in sorted((root / "results").glob("*/measurement.json"))}


def history_rows(root: Path) -> list[dict]:
    return history.read(root / "history.csv")


def check_published(files: dict[str, bytes]) -> dict[str, dict]:
    """Validate a set of published files (from ``working_files``/``head_files``): every record
    against ``measurement``, every badge against ``badge`` and consistent with its record, every
    history row against ``history``, one row per (date, server), and the header. Returns the
    records by server."""
    recs, badges = {}, {}
    for path, data in files.items():
        text = data.decode("utf-8")
        if path.startswith("results/") and path.endswith("/measurement.json"):
            value = parse(text)
            schemas.check("measurement", value, where=path)
            assert value["server"] == path.split("/")[1]
            recs[value["server"]] = value
        elif path.startswith("badges/"):
            value = parse(text)
            schemas.check("badge", value, where=path)
            badges[Path(path).stem] = value
        elif path == "history.csv":
            reader = csv.reader(io.StringIO(text))
            assert next(reader) == list(history.COLUMNS)
            keys = set()
            for row in rows_of_text(text):
                schemas.check("history", row, where="history.csv")
                key = (row["date"], row["server"])
                assert key not in keys, f"two history rows for {key}"
                keys.add(key)
        elif path.endswith(".json"):
            parse(text)
        elif path.endswith(".csv"):
            rows = list(csv.reader(io.StringIO(text)))
            assert rows and len({len(r) for r in rows}) == 1, f"{path}: ragged CSV"
        else:  # pages regenerated from the records (leaderboard, server pages, charts, dashboard)
            assert text.strip(), f"{path} is empty"
            if path.endswith((".svg", ".html")):
                assert text.rstrip().endswith(("</svg>", "</html>")), f"{path} is truncated"
    assert set(badges) == set(recs), (sorted(badges), sorted(recs))
    for server, rec in recs.items():
        tokens = rec["totalTokens"]
        expected = badge_for(rec["status"], None if tokens is None else int(tokens))
        assert badges[server] == expected, (server, badges[server], expected)
    return recs


def rows_of_text(text: str) -> list[dict]:
    """history.csv text as typed rows (as ``harness.db.history.read`` reads a file)."""
    rows = []
    for raw in csv.DictReader(io.StringIO(text)):
        rows.append({
            "date": raw["date"], "server": raw["server"],
            "tokens": int(raw["tokens"]) if raw.get("tokens") else None,
            "toolCount": int(raw["toolCount"]) if raw.get("toolCount") else None,
            "status": raw["status"], "isolation": raw.get("isolation") or None,
        })
    return rows


def last_commit(root: Path) -> dict:
    fmt = "%an%x00%ae%x00%cn%x00%ce%x00%B"
    an, ae, cn, ce, body = git(root, "log", "-1", f"--format={fmt}").split("\x00", 4)
    return {"author": (an, ae), "committer": (cn, ce), "message": body}


BOT_IDENTITY = (BOT.name, BOT.email)


def staging_leftovers(root: Path) -> list[str]:
    base = root / ".staging"
    return sorted(str(p.relative_to(root)) for p in base.rglob("*")) if base.exists() else []


def process_identity(pid: int) -> tuple[int, int] | None:
    """``(pid, start time in clock ticks)`` of a live, non-zombie process, else ``None``. The start
    time tells a process from a later one that reused its pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    return None if fields[0] == "Z" else (pid, int(fields[19]))


def still_running(identity: tuple[int, int]) -> bool:
    """True while the process ``identity`` names (see ``process_identity``) is alive."""
    return process_identity(identity[0]) == identity
