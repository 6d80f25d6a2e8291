"""Cost per release (harness/pages/releases.py): the series rebuilt from the record versions a real
git repository holds, and the ``releases`` command that writes results/releases.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.counting import count_tools
from harness.pages import releases
from tests.pages import builders as b

COMMAND = "npx -y @modelcontextprotocol/server-memory"


def capture_of(tools: list[str], tokens: int) -> list[dict]:
    """A tools/list capture of ``tools`` whose counted total is exactly ``tokens``: the first
    tool's description is padded with words of one token each until the count is met."""
    capture = [b.tool(n, "", schema={"type": "object"}) for n in tools]
    words = 0
    for _ in range(20):
        capture[0]["description"] = " ".join(["x"] * words)
        total = count_tools(capture).totalTokens
        if total == tokens:
            return capture
        words += tokens - total
    raise AssertionError(f"no capture of {tools} counts {tokens} tokens")


def version(release: str | None, tokens: int, tools: list[str], day: str, status: str = "measured") -> dict:
    """Server memory's record of ``release`` measured on ``day``: ``tokens`` over ``tools``,
    re-derivable from its own capture (or a failure with no number)."""
    fields = {"resolvedPackage": None if release is None else {"launcher": "npx", "version": release,
                                                                "name": "@modelcontextprotocol/server-memory"},
              "launchCommand": COMMAND, "measuredAt": f"{day}T03:00:00.000Z"}
    if status != "measured":
        return b.failed("memory", status, ["the server exited before replying"], **fields)
    return b.measured("memory", capture_of(tools, tokens), **fields)


def test_series_rows_between_releases_as_measured():
    recs = [version("1.4.0", 1000, ["a", "b"], "2026-10-05"),
            version("1.4.0", 1010, ["a", "b"], "2026-10-12"),  # same release, drift: no row
            version("1.5.0", 0, [], "2026-10-19", status="startup-failure"),  # a gap, never a zero
            version("1.5.0", 2214, ["a", "c", "d", "e"], "2026-10-26"),
            version(None, 9999, ["z"], "2026-11-02"),  # no release said: not placed
            version("1.5.1", 2100, ["a", "c", "d"], "2026-11-09")]
    rows = releases.series("memory", recs)
    assert [r.summary() for r in rows] == ["1.4.0 → 1.5.0: +1,204 tokens, 3 tools added, 1 tool removed",
                                           "1.5.0 → 1.5.1: −114 tokens, 1 tool removed"]
    assert (rows[0].tokensBefore, rows[0].toolsAdded, rows[0].toolsRemoved, rows[0].date) == (
        1010, ("c", "d", "e"), ("b",), "2026-10-26")
    assert releases.series("memory", recs[:2]) == []


def test_release_of_prefers_the_resolved_install_then_the_pin():
    assert releases.release_of({"resolvedPackage": {"version": "2.0.0"}, "launchCommand": "npx -y p@1.0.0"}) == "2.0.0"
    assert releases.release_of({"resolvedPackage": None, "launchCommand": "npx -y p@1.0.0 --x"}) == "1.0.0"
    assert releases.release_of({"launchCommand": "uvx --from p==0.3.1 p"}) == "0.3.1"
    assert releases.release_of({"launchCommand": "npx -y p@latest"}) is None


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(root)})


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "db"
    (root / "results" / "memory").mkdir(parents=True)
    (root / "servers.yaml").write_text(f"servers:\n- name: memory\n  command: {COMMAND}\n")
    _git(root, "init", "-q", "-b", "main")
    for i, (rel, tokens, tools) in enumerate([("1.4.0", 1000, ["a", "b"]), ("1.5.0", 2204, ["a", "b", "c", "d"]),
                                              ("1.5.0", 2204, ["a", "b", "c", "d"])]):
        rec = version(rel, tokens, tools, f"2026-10-{5 + 7 * i:02d}")
        (root / "results" / "memory" / "measurement.json").write_text(json.dumps(rec, indent=1))
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", f"sweep {i}")
    return root


def test_rows_from_git_history_and_the_working_tree(repo):
    committed = releases.rows(repo, ["memory"])
    assert [r.summary() for r in committed["memory"]] == ["1.4.0 → 1.5.0: +1,204 tokens, 2 tools added"]
    current = version("1.6.0", 2000, ["a", "b", "c"], "2026-11-02")
    both = releases.rows(repo, ["memory"], {"memory": current})
    assert [r.version for r in both["memory"]] == ["1.5.0", "1.6.0"]
    doc = json.loads(releases.render_json(both))
    assert doc["method"] == "release-cost/v1" and doc["servers"]["memory"][1]["summary"] == \
        "1.5.0 → 1.6.0: −204 tokens, 1 tool removed"
    table = releases.markdown(both["memory"])
    assert table.splitlines()[2].startswith("| 1\\.5.0 → 1\\.6.0 | 2026-11-02 | 2,000 | −204 |")


@pytest.mark.slow
def test_releases_command_writes_the_file(repo):
    done = subprocess.run([sys.executable, "-m", "harness.cli", "releases", "--catalog", str(repo / "servers.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "memory: 1.4.0 → 1.5.0: +1,204 tokens, 2 tools added" in done.stdout
    assert json.loads((repo / "results" / "releases.json").read_text())["servers"]["memory"][0]["version"] == "1.5.0"


def test_releases_command_outside_git_is_one_line(tmp_path):
    (tmp_path / "servers.yaml").write_text("servers:\n- name: memory\n  command: npx -y x\n")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "releases", "--catalog", str(tmp_path / "servers.yaml")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and "not inside a git repository" in done.stderr


@pytest.mark.slow
def test_regen_shows_the_rows_on_the_server_page(tmp_path):
    from harness.pages.published_records import RecordError
    from harness.pages.regen import regen
    from tests.pages.builders import entry, measured, tool, write_catalog, write_record

    root = tmp_path / "db"
    root.mkdir()
    write_catalog(root, [entry("memory")])
    _git(root, "init", "-q", "-b", "main")
    for i, (rel, tools) in enumerate([("1.4.0", [tool("a"), tool("b")]),
                                      ("1.5.0", [tool("a"), tool("b"), tool("c", "Does a much longer thing.")])]):
        write_record(root, measured("memory", tools, resolvedPackage={"launcher": "npx", "name": "memory-mcp",
                                                                      "version": rel},
                                    measuredAt=f"2026-10-{5 + 7 * i:02d}T03:00:00.000Z"))
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"sweep {i}")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "releases", "--catalog", str(root / "servers.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (row,) = releases.load(root)["memory"]
    assert row.summary().startswith("1.4.0 → 1.5.0: +") and row.toolsAdded == ("c",)
    regen(root)
    page = (root / "docs" / "servers" / "memory.md").read_text()
    assert "## Cost per release" in page and "| 1\\.4.0 → 1\\.5.0 | 2026-10-12 |" in page
    assert "<h2>Cost per release</h2>" in (root / "docs" / "servers" / "memory.html").read_text()
    before = page
    (root / "results" / "releases.json").write_text('{"servers": {"memory": [{"tokensDelta": "lots"}]}}')
    with pytest.raises(RecordError, match="results/releases.json: not a release-cost file"):
        regen(root)
    assert (root / "docs" / "servers" / "memory.md").read_text() == before


def test_a_publish_brings_the_releases_file_up_to_date_from_git(repo):
    """The sweep's page step rewrites results/releases.json from the history and the records just
    promoted, and names it among its outputs only when its bytes changed."""
    from harness.pages.regen import regen_after_publish

    record = repo / "results" / "memory" / "measurement.json"
    record.write_text(json.dumps(version("1.6.0", 2000, ["a", "b", "c"], "2026-11-02"), indent=1))
    written = regen_after_publish(repo)
    path = repo / "results" / "releases.json"
    assert path in written
    assert [r["version"] for r in json.loads(path.read_text())["servers"]["memory"]] == ["1.5.0", "1.6.0"]
    assert path.read_text() == (repo / "results" / "releases.json").read_text()
    assert path not in regen_after_publish(repo)  # unchanged: not an output again
    assert "## Cost per release" in (repo / "docs" / "servers" / "memory.md").read_text()


def test_a_shallow_clone_keeps_the_releases_file_as_it_is(repo, tmp_path):
    from harness.pages.regen import regen_after_publish

    assert regen_after_publish(repo)  # writes the file from the full history
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pages")
    shallow = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    kept = (shallow / "results" / "releases.json").read_bytes()
    assert b"1.4.0" in kept
    (shallow / "results" / "memory" / "measurement.json").write_text(
        json.dumps(version("1.7.0", 1500, ["a"], "2026-11-09"), indent=1))
    written = regen_after_publish(shallow)
    assert shallow / "results" / "releases.json" not in written
    assert (shallow / "results" / "releases.json").read_bytes() == kept


def _one_release_committed(tmp_path: Path) -> Path:
    """A database whose one entry has one committed record: no release moved."""
    root = tmp_path / "db"
    (root / "results" / "memory").mkdir(parents=True)
    (root / "servers.yaml").write_text(f"servers:\n- name: memory\n  command: {COMMAND}\n")
    (root / "results" / "memory" / "measurement.json").write_text(
        json.dumps(version("1.4.0", 1000, ["a"], "2026-10-05"), indent=1))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    return root


def test_no_release_moves_and_no_file_publish_no_file(tmp_path):
    from harness.pages.regen import regen_after_publish

    root = _one_release_committed(tmp_path)
    assert root / "results" / "releases.json" not in regen_after_publish(root)
    assert not (root / "results" / "releases.json").exists()


@pytest.mark.parametrize("before, after, row", [
    ('uvx --with "mcp<2" mcp-server-time', "uvx mcp-server-time==2026.10.19", False),  # an option dropped
    ("npx -y firecrawl-mcp", "npx -y firecrawl-mcp@3.26.0", True),  # only the pin added
    ("npx -y p@1.0.0", "npx -y p@1.1.0", True),
    ("uvx --from p==0.3.1 p", "uvx --from p==0.4.0 p", True),
    ("npx -y p@1.0.0", "npx -y p@1.1.0 --read-only", False),  # a flag added
    ("npx -y p@1.0.0", "npx -y q@1.1.0", False),  # another package
])
def test_only_records_launched_the_same_way_make_a_release_row(before, after, row):
    first = version("1.0.0", 1000, ["a"], "2026-10-05") | {"launchCommand": before}
    second = version("1.1.0", 1300, ["a", "b"], "2026-10-12") | {"launchCommand": after}
    assert bool(releases.series("memory", [first, second])) is row


def test_another_isolation_is_another_launch():
    first = version("1.0.0", 1000, ["a"], "2026-10-05")
    second = version("1.1.0", 1300, ["a", "b"], "2026-10-12")
    assert releases.series("memory", [first, second])
    moved = second | {"isolation": {**second["isolation"], "mode": "sandbox"}}
    assert releases.series("memory", [first, moved]) == []
    third = version("1.2.0", 1400, ["a", "b"], "2026-10-19") | {"isolation": moved["isolation"]}
    assert [r.version for r in releases.series("memory", [first, moved, third])] == ["1.2.0"]  # starts again


def test_a_publish_reads_the_catalog_and_the_records_once(repo, monkeypatch):
    """The releases file and the pages are made from one reading of the catalog and the records."""
    from harness.pages import regen as regen_module

    reads = {"catalog": 0, "records": 0}

    def counted(name, real):
        def read(*args, **kwargs):
            reads[name] += 1
            return real(*args, **kwargs)
        return read

    monkeypatch.setattr(regen_module, "load_catalog", counted("catalog", regen_module.load_catalog))
    monkeypatch.setattr(regen_module, "load_records", counted("records", regen_module.load_records))
    record = repo / "results" / "memory" / "measurement.json"
    record.write_text(json.dumps(version("1.6.0", 2000, ["a", "b", "c"], "2026-11-02"), indent=1))
    written = regen_module.regen_after_publish(repo)
    assert reads == {"catalog": 1, "records": 1}
    assert repo / "results" / "releases.json" in written  # the release move made from that reading
    assert "| 1\\.5.0 → 1\\.6.0 |" in (repo / "docs" / "servers" / "memory.md").read_text()
    reads.update(catalog=0, records=0)
    regen_module.regen(repo)  # on its own, regen reads them itself
    assert reads == {"catalog": 1, "records": 1}


@pytest.mark.slow
def test_the_command_and_a_publish_write_the_same_bytes(repo, tmp_path):
    """The ``releases`` command writes through ``releases.refresh``, the publish's own home for the file:
    to ``--out`` the same bytes, leaving results/releases.json alone, and a second run says unchanged."""
    from harness.pages.regen import regen_after_publish

    out = tmp_path / "elsewhere.json"
    run = [sys.executable, "-m", "harness.cli", "releases", "--catalog", str(repo / "servers.yaml"), "--out", str(out)]
    done = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    assert not (repo / "results" / "releases.json").exists()
    regen_after_publish(repo)
    assert out.read_bytes() == (repo / "results" / "releases.json").read_bytes()
    again = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and f"{out} unchanged" in again.stdout, again.stderr


@pytest.mark.slow
def test_the_command_writes_no_file_when_nothing_moved(tmp_path):
    root = _one_release_committed(tmp_path)
    done = subprocess.run([sys.executable, "-m", "harness.cli", "releases", "--catalog", str(root / "servers.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "0 release moves over 1 entries; no file written" in done.stdout, done.stderr
    assert not (root / "results" / "releases.json").exists()
